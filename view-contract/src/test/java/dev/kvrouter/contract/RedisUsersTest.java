package dev.kvrouter.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shipped Redis users as a deployment fills them in (the refusals themselves: RedisUsersITCase). */
class RedisUsersTest {

    private static Map<String, String> passwords() {
        return new HashMap<>(Map.of(RedisUsers.JOB, "#ab", RedisUsers.BALANCER, ">x", RedisUsers.READER, ">y"));
    }

    @Test
    void everyUserIsFilledInWithItsPasswordAndThePrefixAndStartsFromNothing() {
        List<String> lines = RedisUsers.directives("kvr:", passwords());
        assertThat(lines).hasSize(RedisUsers.ALL.size());
        for (int i = 0; i < lines.size(); i++) {
            assertThat(lines.get(i)).startsWith("user " + RedisUsers.ALL.get(i) + " on ").contains(" resetkeys ", " -@all ", " -@dangerous ")
                    .doesNotContain("{password", "{prefix}", "+@all", "~*", "allkeys");
        }
        assertThat(lines.get(0)).contains(" #ab ", " ~kvr:* ", "+function|load");
        assertThat(lines.get(1)).as("the balancer reads the view and writes its reservations only")
                .contains(" >x ", " %R~kvr:* ", " ~kvr:{head}:res* ", "-@scripting +fcall +fcall_ro").doesNotContain(" ~kvr:* ", "function|");
        assertThat(lines.get(2)).as("the reader: reads and kvr_peek").contains(" %R~kvr:* ", "+fcall_ro")
                .doesNotContain("+@write", "+fcall ", " ~kvr");
    }

    @Test
    void aMissingPasswordOrAPrefixAnAclRuleCannotHoldIsRefusedByName() {
        Map<String, String> passwords = passwords();
        passwords.remove(RedisUsers.READER);
        assertThatThrownBy(() -> RedisUsers.directives("kvr:", passwords)).hasMessageContaining("no password for Redis user kvr-reader");
        passwords.put(RedisUsers.READER, "plain");
        assertThatThrownBy(() -> RedisUsers.directives("kvr:", passwords)).hasMessageContaining("'>' and the password, or '#'");
        assertThatThrownBy(() -> RedisUsers.directives("a b:", passwords())).hasMessageContaining("may not contain spaces");
    }
}
