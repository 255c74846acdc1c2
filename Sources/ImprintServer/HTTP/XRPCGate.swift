import HTTPTypes
import Hummingbird

/// The checks every authenticated XRPC method passes before its handler runs, shared by
/// every service in the process (Delivery Service, zone service) so that they share one
/// replay guard and one per-DID rate limit: the token is verified for the method's NSID
/// (`lxm`), its `jti` admitted once, and the caller's token bucket charged.
package struct XRPCGate: Sendable {
    package let verifier: ServiceAuthVerifier
    package let rateLimiter: RateLimiter

    package init(verifier: ServiceAuthVerifier, rateLimiter: RateLimiter) {
        self.verifier = verifier
        self.rateLimiter = rateLimiter
    }

    /// The caller DID of a request for method `nsid`; throws the contract's 401 or 429.
    /// Annotates the request's log line with `route` and, once known, the caller.
    package func caller(of request: Request, context: DeliveryRequestContext, nsid: String, route: String) async throws -> String {
        context.annotations.route = route
        let token = try await verifier.verify(authorization: request.headers[.authorization], lxm: nsid)
        context.annotations.caller = token.issuer
        try await token.admit(with: verifier.replayGuard)
        // Authenticated: the connection no longer counts against its address's cap.
        context.channel?.pipeline.fireUserInboundEventTriggered(ConnectionAuthenticated())
        guard rateLimiter.admit(token.issuer) else { throw DeliveryError.rateLimited() }
        return token.issuer
    }
}

extension RouterMethods where Context == DeliveryRequestContext {
    /// Registers an authenticated XRPC method at `/xrpc/<nsid>`: `POST` for a procedure,
    /// `GET` for a query. `handler` runs after `gate` admitted the request, with the caller DID.
    package func xrpc(
        nsid: String, route: String, procedure: Bool, gate: XRPCGate,
        _ handler: @escaping @Sendable (Request, String) async throws -> Response
    ) {
        let responder: @Sendable (Request, DeliveryRequestContext) async throws -> Response = { request, context in
            let caller = try await gate.caller(of: request, context: context, nsid: nsid, route: route)
            return try await handler(request, caller)
        }
        if procedure {
            post(RouterPath("/xrpc/\(nsid)"), use: responder)
        } else {
            get(RouterPath("/xrpc/\(nsid)"), use: responder)
        }
    }
}
