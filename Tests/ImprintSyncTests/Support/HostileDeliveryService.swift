import Foundation
import ImprintDelivery
import ImprintSync

/// A Delivery Service stand-in in front of the real one that misbehaves as a hostile
/// service could, in the ways `behaviour` says; every other call goes through unchanged.
struct HostileDeliveryService: ForwardingDeliveryService {
    enum Behaviour: Sendable {
        /// `getKeyPackages` hands out `replacement` for `did` (a key package of the service's choosing).
        case swapKeyPackage(did: String, replacement: Data)
        /// Hides the commit of seq `hiddenSeq` from this member and acknowledges this member's
        /// own commits without passing them on: the member follows a history of its own.
        case fork(hiddenSeq: Int)
    }

    let real: any DeliveryService
    let behaviour: Behaviour

    func getKeyPackages(dids: [String], cipherSuite: Int?) async throws -> GetKeyPackagesOutput {
        var output = try await real.getKeyPackages(dids: dids, cipherSuite: cipherSuite)
        if case let .swapKeyPackage(did, replacement) = behaviour {
            output.keyPackages = output.keyPackages.map { ref in
                var ref = ref
                if ref.did == did { ref.keyPackage = replacement }
                return ref
            }
        }
        return output
    }

    func getMessages(convoId: String, sinceSeq: Int?, limit: Int?) async throws -> GetMessagesOutput {
        var output = try await real.getMessages(convoId: convoId, sinceSeq: sinceSeq, limit: limit)
        if case let .fork(hidden) = behaviour { output.messages.removeAll { $0.seq == hidden } }
        return output
    }

    func getConvos() async throws -> GetConvosOutput {
        var output = try await real.getConvos()
        if case .fork = behaviour {
            // This member must not learn that the epoch moved on without it.
            output.convos = output.convos.map { convo in
                var convo = convo
                convo.epoch = -1
                return convo
            }
        }
        return output
    }

    func sendMessage(_ input: SendMessageInput) async throws -> SendMessageOutput {
        if case .fork = behaviour, input.messageType == .commit {
            return SendMessageOutput(seq: 1_000_000, epoch: input.epoch + 1, recipients: [], serverTime: Date())
        }
        return try await real.sendMessage(input)
    }
}
