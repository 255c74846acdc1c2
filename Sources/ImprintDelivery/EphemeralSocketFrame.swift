import Foundation
import NIOCore

/// The binary frames of the ephemeral socket (v1.5, `ephemeralSocket`): one WebSocket binary
/// message per ephemeral message, big-endian, no JSON and no base64.
///
/// A member's send (client to service), the socket's counterpart of a `sendEphemeral` body
/// (the convo is the socket's):
///
/// | bytes | field |
/// |---|---|
/// | 1 | `0x01` |
/// | 8 | epoch (unsigned, at most `Int64.max`) |
/// | 1 | length k of the kind (0: none, i.e. `presence`) |
/// | k | kind, `[a-z0-9-]` |
/// | rest | data (1 to `maxEphemeralBytes`) |
///
/// Another member's message (service to client), the counterpart of an `ephemeral` event:
/// `0x02`, epoch (8), kind length and kind as above, sender DID length (2) and the sender's
/// DID (UTF-8), then the data.
public enum EphemeralSocketFrame {
    /// First byte of a member's send.
    public static let sendTag: UInt8 = 0x01
    /// First byte of a relayed message.
    public static let messageTag: UInt8 = 0x02
    /// The largest header a send carries (tag, epoch, kind length, a 32-byte kind).
    public static let maxSendHeaderBytes = 1 + 8 + 1 + 32

    /// A send frame for `input` (its `convoId` is the socket's and is not written).
    public static func encodeSend(_ input: SendEphemeralInput, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: maxSendHeaderBytes + input.data.count)
        writeHeader(&buffer, tag: sendTag, epoch: input.epoch, kind: input.kind)
        buffer.writeBytes(input.data)
        return buffer
    }

    /// The send in `buffer`, for convo `convoId`. Checks the layout only (the service then
    /// applies `sendEphemeral`'s rules to the values).
    public static func decodeSend(_ buffer: ByteBuffer, convoId: String) throws(EphemeralFrameError) -> SendEphemeralInput {
        var buffer = buffer
        guard buffer.readInteger(as: UInt8.self) == sendTag else { throw EphemeralFrameError("not a send frame (first byte must be 0x01)") }
        let (epoch, kind) = try readEpochAndKind(&buffer)
        return SendEphemeralInput(convoId: convoId, epoch: epoch, data: Data(buffer.readableBytesView), kind: kind)
    }

    /// A relayed-message frame for `message` (its `convoId` is the socket's and is not written).
    public static func encodeMessage(_ message: EphemeralMessage, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
        let sender = Array(message.sender.utf8)
        var buffer = allocator.buffer(capacity: maxSendHeaderBytes + 2 + sender.count + message.data.count)
        writeHeader(&buffer, tag: messageTag, epoch: message.epoch, kind: message.kind)
        buffer.writeInteger(UInt16(clamping: sender.count))
        buffer.writeBytes(sender)
        buffer.writeBytes(message.data)
        return buffer
    }

    /// The relayed message in `buffer`, for convo `convoId`.
    public static func decodeMessage(_ buffer: ByteBuffer, convoId: String) throws(EphemeralFrameError) -> EphemeralMessage {
        var buffer = buffer
        guard buffer.readInteger(as: UInt8.self) == messageTag else { throw EphemeralFrameError("not a message frame (first byte must be 0x02)") }
        let (epoch, kind) = try readEpochAndKind(&buffer)
        guard let senderLength = buffer.readInteger(as: UInt16.self), let sender = buffer.readString(length: Int(senderLength)) else {
            throw EphemeralFrameError("frame ends inside the sender")
        }
        return EphemeralMessage(convoId: convoId, sender: sender, epoch: epoch, data: Data(buffer.readableBytesView), kind: kind)
    }

    private static func writeHeader(_ buffer: inout ByteBuffer, tag: UInt8, epoch: Int, kind: String?) {
        let kind = kind.map { Array($0.utf8) } ?? []
        buffer.writeInteger(tag)
        buffer.writeInteger(UInt64(clamping: epoch))
        buffer.writeInteger(UInt8(clamping: kind.count))
        buffer.writeBytes(kind)
    }

    private static func readEpochAndKind(_ buffer: inout ByteBuffer) throws(EphemeralFrameError) -> (Int, String?) {
        guard let epoch = buffer.readInteger(as: UInt64.self), let kindLength = buffer.readInteger(as: UInt8.self) else {
            throw EphemeralFrameError("frame ends inside its header")
        }
        guard epoch <= UInt64(Int64.max) else { throw EphemeralFrameError("epoch must not be negative") }
        guard kindLength <= 32 else { throw EphemeralFrameError("kind must be 1 to 32 characters of a-z, 0-9 and -") }
        guard kindLength > 0 else { return (Int(epoch), nil) }
        guard let kind = buffer.readString(length: Int(kindLength)) else { throw EphemeralFrameError("frame ends inside the kind") }
        return (Int(epoch), kind)
    }
}

/// A frame of the ephemeral socket that does not have the layout of ``EphemeralSocketFrame``.
public struct EphemeralFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, one line.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
