import Foundation
import ImprintDelivery
import ImprintServer

/// Shape checks for the zone API's own inputs (the Delivery Service's `InputRules` cover DIDs,
/// convo ids, hashes and free text).
enum ZoneInputRules {
    /// `[A-Za-z0-9._~-]`, the characters of record names and snapshot ids.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// 1–255 of `[A-Za-z0-9._~-]`, and nothing a file system or shell reads as a path:
    /// not `.` or `..`, not starting with `.` (hidden, and our temporary names) or `~`.
    static func recordName(_ name: String) throws {
        guard (1...255).contains(name.utf8.count), name.utf8.allSatisfy(isNameByte) else {
            throw DeliveryError.invalidRequest("recordName must be 1-255 characters of [A-Za-z0-9._~-]")
        }
        guard let first = name.utf8.first, first != UInt8(ascii: "."), first != UInt8(ascii: "~") else {
            throw DeliveryError.invalidRequest("recordName must not start with '.' or '~' (it could be read as a path)")
        }
    }

    static func recordType(_ type: String) throws {
        guard (1...64).contains(type.utf8.count), type.utf8.allSatisfy(isNameByte) else {
            throw DeliveryError.invalidRequest("recordType must be 1-64 characters of [A-Za-z0-9._~-]")
        }
    }

    /// Routing metadata: bounded, and the contract's keys of the right type.
    static func fields(_ fields: [String: JSONValue], limit: Int) throws -> RoutingFields {
        let encoded = try WireJSON.encoder().encode(fields)
        guard encoded.count <= limit else { throw DeliveryError.invalidRequest("fields longer than \(limit) bytes") }
        var routing = RoutingFields()
        for key in ["epoch", "seq", "chunkIndex", "chunkCount"] {
            guard let value = fields[key] else { continue }
            guard case .number(let number) = value, number >= 0, number <= 9_007_199_254_740_991, number.rounded() == number else {
                throw DeliveryError.invalidRequest("fields.\(key) must be a non-negative integer")
            }
            switch key {
            case "epoch": routing.epoch = Int64(number)
            case "seq": routing.seq = Int64(number)
            default: break
            }
        }
        for key in ["convoId", "payloadHash", "expiresAt", "commentKeyHash"] {
            guard let value = fields[key] else { continue }
            guard case .string(let text) = value else { throw DeliveryError.invalidRequest("fields.\(key) must be a string") }
            switch key {
            case "convoId":
                try InputRules.convoId(text)
                routing.convoId = text
            case "payloadHash":
                try InputRules.hash(text)
                routing.payloadHash = text
            case "commentKeyHash":
                try InputRules.hash(text)
                routing.commentKeyHash = text
            default:
                guard let date = RFC3339.date(from: text) else { throw DeliveryError.invalidRequest("fields.expiresAt must be an RFC 3339 time") }
                routing.expiresAt = date
            }
        }
        return routing
    }
}

/// The `fields` the server reads: the DS cross-check of `change`/`commit` records, the
/// `(epoch, seq)` index, and a snapshot's expiry and comment capability (its SHA-256).
struct RoutingFields: Sendable, Equatable {
    var convoId: String?
    var epoch: Int64?
    var seq: Int64?
    var payloadHash: String?
    var expiresAt: Date?
    var commentKeyHash: String?
}
