import Foundation

extension DeliveryClient {
    /// v1.5: opens this member's ephemeral socket on `convoId` (``EphemeralChannel``): one
    /// WebSocket for sending and receiving ephemeral messages, authenticated once, in place of
    /// a `sendEphemeral` POST per message and a `subscribeEphemeral` stream.
    ///
    /// Returns nil when the service predates v1.5 (it does not know the method): use
    /// ``sendEphemeral(_:)`` and ``subscribeEphemeral(convoId:)`` then. Throws the service's
    /// error when it refuses (as `subscribeEphemeral` would: 401 for the token, 403
    /// `NotMember`), or the transport's.
    public func openEphemeralChannel(convoId: String) async throws -> EphemeralChannel? {
        let method = DeliveryMethod.ephemeralSocket
        let request = try XRPCRequestBuilder(baseURL: baseURL, serviceDID: serviceDID, signer: signer)
            .request(path: method.path, query: [("convoId", convoId)], method: .GET, lxm: method.nsid)
        let authorization = request.headers.first(name: "Authorization") ?? ""
        do {
            return try await EphemeralChannel.open(url: request.url, authorization: authorization, convoId: convoId)
        } catch let error as EphemeralUpgradeRefused {
            // Refused: ask again as plain HTTP (a fresh token) to learn why, in the
            // contract's terms. A service without the method answers 404 NotFound "no such
            // method" (an unknown convo is also a 404 NotFound, with another message).
            do {
                let _: EmptyOutput = try await query(method, [("convoId", convoId)])
            } catch let refusal as DeliveryServiceError where refusal.isUnknownMethod {
                return nil
            }
            throw error
        }
    }
}

extension DeliveryServiceError {
    /// The answer of a service that does not know the method (one older than the method).
    var isUnknownMethod: Bool { status == 404 && name == "NotFound" && body.message == "no such method" }
}
