package dev.kvrouter.schemas;

import dev.kvrouter.contract.ViewContract.Reason;
import dev.kvrouter.events.RouteReason;

/**
 * A reason the view's library answered, as a {@code RoutingDecision} carries it: its family in {@code reason} (the Avro
 * enum holds the contract's families: readers of older schemas, dashboards and alert rules know them) and the reason
 * itself in {@code reason_detail} when it is finer than its family (kvr-view.yaml, {@code reasons}).
 */
public final class RouteReasons {

    private RouteReasons() {}

    /** The decision's {@code reason}: the family of the library's reason; UNKNOWN for none or a name of a later library. */
    public static RouteReason of(String libraryReason) {
        Reason reason = Reason.named(libraryReason);
        return reason == null ? RouteReason.UNKNOWN : RouteReason.valueOf(reason.family().name());
    }

    /** The decision's {@code reason_detail}: the library's reason where its family does not say it all, else null. */
    public static String detail(String libraryReason) {
        Reason reason = Reason.named(libraryReason);
        if (libraryReason == null || (reason != null && reason.family() == reason)) {
            return null;
        }
        return libraryReason; // finer than its family, or a later library's: kept as it was answered
    }
}
