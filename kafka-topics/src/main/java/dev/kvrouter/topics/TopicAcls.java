package dev.kvrouter.topics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Least privilege on Kafka, from the catalog's writers and readers: each role's principal may write
 * (and describe) the topics it produces and read (and describe) the ones it consumes, nothing else;
 * the job may also use its consumer groups (a group-id prefix). With an authorizer on, a principal
 * outside its role is refused — a buggy balancer cannot write engine events, an engine cannot write
 * decisions. Idempotent producers need no cluster permission since Kafka 3.0.
 */
public final class TopicAcls {

    /** The roles a topic's writers and readers name. */
    public static final List<String> ROLES = dev.kvrouter.common.KafkaRoles.ALL;

    private TopicAcls() {}

    /**
     * @param principals   each role's principal (e.g. {@code job=User:kvr-job}); every role the catalog names needs one
     * @param jobGroupPrefix the job's consumer group ids start with this ({@code kafka.group-id})
     */
    public static List<AclBinding> bindings(TopicCatalog catalog, Map<String, String> principals, String jobGroupPrefix) {
        TreeSet<String> missing = new TreeSet<>();
        List<AclBinding> bindings = new ArrayList<>();
        for (TopicSpec t : catalog.topics()) {
            ResourcePattern topic = new ResourcePattern(ResourceType.TOPIC, t.name(), PatternType.LITERAL);
            for (String role : t.writers()) {
                allow(bindings, missing, principals, role, topic, AclOperation.WRITE, AclOperation.DESCRIBE);
            }
            for (String role : t.readers()) {
                allow(bindings, missing, principals, role, topic, AclOperation.READ, AclOperation.DESCRIBE);
            }
        }
        allow(bindings, missing, principals, dev.kvrouter.common.KafkaRoles.JOB, new ResourcePattern(ResourceType.GROUP, jobGroupPrefix, PatternType.PREFIXED),
                AclOperation.READ, AclOperation.DESCRIBE);
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("no principal for role(s) " + String.join(", ", missing)
                    + ": give each as --acl ROLE=User:NAME (roles: " + String.join(", ", ROLES) + ")");
        }
        return bindings.stream().distinct().toList();
    }

    private static void allow(List<AclBinding> bindings, TreeSet<String> missing, Map<String, String> principals, String role,
                              ResourcePattern resource, AclOperation... operations) {
        String principal = principals.get(role);
        if (principal == null) {
            missing.add(role);
            return;
        }
        for (AclOperation op : operations) {
            bindings.add(new AclBinding(resource, new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW)));
        }
    }
}
