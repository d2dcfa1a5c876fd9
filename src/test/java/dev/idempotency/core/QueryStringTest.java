package dev.idempotency.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class QueryStringTest {

    @Test
    void noQueryIsEmpty() {
        assertThat(QueryString.canonical(null)).isEmpty();
        assertThat(QueryString.canonical("")).isEmpty();
        assertThat(QueryString.canonical("&&")).isEmpty();
    }

    @Test
    void orderAndSpellingOfTheParametersDoNotMatter() {
        String canonical = QueryString.canonical("dryRun=true&currency=EUR");
        assertThat(QueryString.canonical("currency=EUR&dryRun=true")).isEqualTo(canonical);
        assertThat(QueryString.canonical("currency=%45UR&&dryRun=true&")).isEqualTo(canonical);
        assertThat(QueryString.canonical("note=a+b")).isEqualTo(QueryString.canonical("note=a%20b"));
    }

    @Test
    void whatTheParametersSayDoesMatter() {
        assertThat(QueryString.canonical("dryRun=true")).isNotEqualTo(QueryString.canonical("dryRun=false"))
                .isNotEqualTo(QueryString.canonical("dryRun"));
        assertThat(QueryString.canonical("a=1&a=2")).as("every value of a repeated name counts")
                .isNotEqualTo(QueryString.canonical("a=1"))
                .isEqualTo(QueryString.canonical("a=2&a=1"));
        assertThat(QueryString.canonical("a=1%262")).as("an escaped & is part of the value")
                .isNotEqualTo(QueryString.canonical("a=1&2"));
        assertThat(QueryString.canonical("a%3D1=2")).isNotEqualTo(QueryString.canonical("a=1%3D2"));
    }

    @Test
    void aMalformedEscapeIsKeptAsWritten() {
        assertThat(QueryString.canonical("a=%G1&b=%")).isEqualTo(QueryString.canonical("b=%&a=%G1"))
                .isNotEqualTo(QueryString.canonical("a=%G2&b=%"));
    }
}
