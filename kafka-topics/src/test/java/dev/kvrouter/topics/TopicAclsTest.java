package dev.kvrouter.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

class TopicAclsTest {

    private static final Map<String, String> PRINCIPALS = Map.of("bridge", "User:b", "balancer", "User:lb", "job", "User:j");

    private static List<String> allowed(List<AclBinding> bindings, String principal, AclOperation op) {
        return bindings.stream().filter(b -> b.entry().principal().equals(principal) && b.entry().operation() == op
                && b.pattern().resourceType() == ResourceType.TOPIC).map(b -> b.pattern().name()).sorted().toList();
    }

    @Test
    void eachRoleWritesWhatItProducesReadsWhatItConsumesAndNothingElse() {
        List<AclBinding> bindings = TopicAcls.bindings(TopicCatalog.bundled().withPrefix("p."), PRINCIPALS, "kvr-job");
        assertThat(allowed(bindings, "User:b", AclOperation.WRITE)).containsExactly("p.kvr.dead-letter", "p.kvr.engine-load",
                "p.kvr.kv-events");
        assertThat(allowed(bindings, "User:b", AclOperation.READ)).isEmpty();
        assertThat(allowed(bindings, "User:lb", AclOperation.WRITE)).containsExactly("p.kvr.dead-letter", "p.kvr.request-outcomes",
                "p.kvr.routing-decisions");
        assertThat(allowed(bindings, "User:j", AclOperation.READ)).containsExactly("p.kvr.engine-load", "p.kvr.kv-events",
                "p.kvr.request-outcomes", "p.kvr.routing-decisions");
        assertThat(allowed(bindings, "User:j", AclOperation.WRITE)).doesNotContain("p.kvr.kv-events", "p.kvr.routing-decisions")
                .contains("p.kvr.view-changelog", "p.kvr.engine-state", "p.kvr.dead-letter");
        assertThat(bindings).filteredOn(b -> b.pattern().resourceType() == ResourceType.GROUP).allSatisfy(b -> {
            assertThat(b.pattern().name()).isEqualTo("kvr-job");
            assertThat(b.pattern().patternType()).isEqualTo(PatternType.PREFIXED);
            assertThat(b.entry().principal()).isEqualTo("User:j");
        });
        assertThat(bindings).doesNotHaveDuplicates();
    }

    @Test
    void aRoleWithoutAPrincipalIsNamedWithTheOthers() {
        assertThatThrownBy(() -> TopicAcls.bindings(TopicCatalog.bundled(), Map.of("job", "User:j"), "g"))
                .hasMessageContaining("no principal for role(s) balancer, bridge");
    }

    @Test
    void theCatalogRefusesAnUnknownRoleAndATopicNobodyWrites() {
        assertThatThrownBy(() -> TopicCatalog.parse("""
                topics:
                  - name: t1
                    partitions: 1
                    writers: [engine]
                  - name: t2
                    partitions: 1
                """, "test")).hasMessageContaining("topic t1.writers: 'engine' is not a role")
                .hasMessageContaining("topic t2: 'writers' must name the roles");
    }
}
