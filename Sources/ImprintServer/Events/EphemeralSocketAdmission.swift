import ImprintDelivery
import NIOCore
import NIOHTTP1

/// Decides whether an upgrade request becomes an ephemeral socket (v1.5, `ephemeralSocket`),
/// and if not, with which of the contract's errors it is answered.
///
/// It runs the checks of an ordinary request to the method, in the same order and with the
/// same answers: those of ``XRPCGate`` (the bearer token verifies for the method's NSID, 401;
/// its `jti` is recorded once, a replay is 401; the caller's rate-limit bucket is charged,
/// 429), then those of `subscribeEphemeral` (one well-formed `convoId`, 400; an active member,
/// 403 `NotMember`, 404 for an unknown convo). A refused upgrade is answered with that error
/// and the connection closed (``EphemeralSocketUpgradeChannel``); an admitted one becomes
/// the member's socket. An upgrade request for any other path is a 400.
struct EphemeralSocketAdmission: Sendable {
    let store: any DeliveryStore
    let gate: XRPCGate
    let metrics: ServerMetrics

    /// The convo and the caller of an upgrade request, or the error that refuses it.
    func admit(_ head: HTTPRequestHead, channel: any Channel) async -> Result<(convoId: String, caller: String), DeliveryError> {
        do {
            return .success(try await check(head, channel: channel))
        } catch let error as DeliveryError {
            metrics.recordRejection(error.name)
            return .failure(error)
        } catch {
            return .failure(.internalError())
        }
    }

    private func check(_ head: HTTPRequestHead, channel: any Channel) async throws -> (convoId: String, caller: String) {
        let method = DeliveryMethod.ephemeralSocket
        let (path, query) = Self.split(head.uri)
        guard path == method.path else { throw DeliveryError.invalidRequest("only \(method.path) upgrades to a WebSocket") }
        guard head.method == .GET else { throw DeliveryError.methodNotAllowed("wrong HTTP method") }
        let token = try await gate.verifier.verify(authorization: head.headers.first(name: "Authorization"), lxm: method.nsid)
        try await token.admit(with: gate.verifier.replayGuard)
        // Authenticated: the connection no longer counts against its address's cap.
        channel.pipeline.fireUserInboundEventTriggered(ConnectionAuthenticated())
        guard gate.rateLimiter.admit(token.issuer) else { throw DeliveryError.rateLimited() }
        let convoId = try QueryParameters(query: query, allowed: ["convoId"]).required("convoId")
        try InputRules.convoId(convoId)
        guard try await store.isActiveMember(convoId: convoId, did: token.issuer) else { throw DeliveryError.notMember(convoId) }
        return (convoId, token.issuer)
    }

    static func split(_ uri: String) -> (path: String, query: String) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, "") }
        return (String(uri[..<mark]), String(uri[uri.index(after: mark)...]))
    }
}
