import Foundation
import ImprintDelivery
import NIOCore
import Testing

/// The ephemeral socket's binary frames (v1.5): round trips, and every malformed layout refused
/// with a reason rather than read past its end.
@Suite struct EphemeralSocketFrameTests {
    @Test func sendsAndMessagesRoundTrip() throws {
        for kind in [nil, "preview", String(repeating: "k", count: 32)] {
            let input = SendEphemeralInput(convoId: "c", epoch: 42, data: Data([1, 2, 3]), kind: kind)
            #expect(try EphemeralSocketFrame.decodeSend(EphemeralSocketFrame.encodeSend(input), convoId: "c") == input)
            let message = EphemeralMessage(convoId: "c", sender: "did:key:z6MkSender", epoch: Int(Int64.max), data: Data([9]), kind: kind)
            #expect(try EphemeralSocketFrame.decodeMessage(EphemeralSocketFrame.encodeMessage(message), convoId: "c") == message)
        }
        let send = EphemeralSocketFrame.encodeSend(SendEphemeralInput(convoId: "c", epoch: 1, data: Data([7]), kind: "ab"))
        #expect(Array(send.readableBytesView) == [0x01, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0x61, 0x62, 7])
    }

    @Test func malformedFramesAreRefused() {
        let malformed: [[UInt8]] = [
            [], [0x02], [0x01, 0, 0], [0x01, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x01, 0x80, 0, 0, 0, 0, 0, 0, 0, 0], [0x01, 0, 0, 0, 0, 0, 0, 0, 1, 33],
            [0x01, 0, 0, 0, 0, 0, 0, 0, 1, 5, 0x61],
        ]
        for bytes in malformed {
            #expect(throws: EphemeralFrameError.self, "\(bytes)") { try EphemeralSocketFrame.decodeSend(ByteBuffer(bytes: bytes), convoId: "c") }
        }
        let truncatedSender: [UInt8] = [0x02, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 9, 0x64]
        #expect(throws: EphemeralFrameError.self) { try EphemeralSocketFrame.decodeMessage(ByteBuffer(bytes: truncatedSender), convoId: "c") }
    }
}
