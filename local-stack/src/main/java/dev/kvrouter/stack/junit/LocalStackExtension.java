package dev.kvrouter.stack.junit;

import dev.kvrouter.stack.LocalStack;
import dev.kvrouter.stack.StackAddresses;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives ITCases a running stack: {@code @ExtendWith(LocalStackExtension.class)}, then take a
 * {@link StackAddresses} parameter (constructor, lifecycle or test method).
 *
 * <p>When {@code KAFKA_BOOTSTRAP}, {@code SCHEMA_REGISTRY_URL} and {@code REDIS_URL} are set in the
 * environment, that stack is used and left alone. Otherwise one private stack is started for the
 * whole test run (the JUnit root store: once per test JVM, not per class) in
 * {@code target/kvr-it-stack} (logs stay there), and stopped when the run ends.
 * Tests keep out of each other's way with {@link UniqueNames}.
 */
public final class LocalStackExtension implements BeforeAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LocalStackExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        stack(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == StackAddresses.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return stack(extensionContext);
    }

    private static StackAddresses stack(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(RunningStack.class, k -> RunningStack.start(), RunningStack.class)
                .addresses();
    }

    /** Closed by JUnit when the root store closes, at the end of the run. */
    private record RunningStack(StackAddresses addresses, Optional<LocalStack> owned, Optional<Thread> hook)
            implements AutoCloseable {

        static RunningStack start() {
            Optional<StackAddresses> given = StackAddresses.fromEnv(System.getenv());
            if (given.isPresent() && !given.get().clientConfig().isEmpty()) {
                // The tests' own clients connect in plaintext: against a secure stack they would only time out.
                throw new IllegalStateException("the environment names a secure stack (" + StackAddresses.CLIENT_CONFIG
                        + " is set): the ITCases need a plaintext one; unset the stack's variables to start a private one "
                        + "(SecureStackITCase starts its own secure stack)");
            }
            if (given.isPresent()) {
                return new RunningStack(given.get(), Optional.empty(), Optional.empty());
            }
            Path dir = Path.of(System.getProperty("kvr.it.stack.dir", "target/kvr-it-stack"));
            LocalStack stack = LocalStack.at(dir);
            // A JVM ended by a signal never closes the store: stop the stack on the way out then.
            Thread hook = new Thread(stack::down, "kvr-it-stack-down");
            Runtime.getRuntime().addShutdownHook(hook);
            return new RunningStack(stack.up(), Optional.of(stack), Optional.of(hook));
        }

        @Override
        public void close() {
            owned.ifPresent(LocalStack::down);
            hook.ifPresent(Runtime.getRuntime()::removeShutdownHook);
        }
    }
}
