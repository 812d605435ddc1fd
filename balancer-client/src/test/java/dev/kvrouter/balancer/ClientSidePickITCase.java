package dev.kvrouter.balancer;

/**
 * Every case of {@link PickFunctionITCase} again, picked in the client from plain reads (the Redis
 * Cluster path): {@link dev.kvrouter.balancer.PickPolicy} must answer exactly as kvr_pick does.
 */
class ClientSidePickITCase extends PickFunctionITCase {

    @Override
    boolean clientSide() {
        return true;
    }
}
