import Foundation
import Hummingbird
import ImprintDelivery

/// v1.3: processed cursors and checkpoints, the Delivery Service's half of compaction.
extension DeliveryController {
    @Sendable func updateCursor(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(UpdateCursorInput.self, request)
        try InputRules.convoId(input.convoId)
        let stored = try await store.updateCursor(convoId: input.convoId, did: caller, processedSeq: input.processedSeq, now: Date())
        return try json(UpdateCursorOutput(processedSeq: stored))
    }

    @Sendable func markCheckpoint(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(MarkCheckpointInput.self, request)
        try InputRules.convoId(input.convoId)
        guard input.seq >= 1 else { throw DeliveryError.invalidRequest("seq must be at least 1") }
        try await store.markCheckpoint(convoId: input.convoId, did: caller, seq: input.seq)
        return try json(EmptyOutput())
    }

    @Sendable func getCursors(_ request: Request, caller: String) async throws -> Response {
        let query = try self.query(request, allowed: ["convoId"])
        let convoId = try query.required("convoId")
        try InputRules.convoId(convoId)
        return try json(try await store.cursors(convoId: convoId, caller: caller))
    }
}
