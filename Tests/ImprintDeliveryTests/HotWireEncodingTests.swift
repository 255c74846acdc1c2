import Foundation
@testable import ImprintDelivery
import Testing

/// The hand-written encoders must write exactly what `WireJSON.encoder()` writes.
@Suite struct HotWireEncodingTests {
    /// Strings that exercise every escaping rule: all control bytes, quotes, backslashes,
    /// slashes, DEL, multi-byte UTF-8 (2, 3 and 4 bytes), U+2028, a BOM, an empty string.
    static let awkwardStrings: [String] = {
        var controls = ""
        for value in 0..<0x20 { controls.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        return [
            "", "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", controls, "\"\\/", "a\u{7F}b",
            "é中😀", "line\u{2028}sep\u{FEFF}", "end\\", "\"", "x/y://z", "tab\there\r\n", String(repeating: "\u{1}ab", count: 40),
        ]
    }()

    private static func referenceBytes(_ value: some Encodable) throws -> [UInt8] {
        Array(try WireJSON.encoder().encode(value))
    }

    static func messages() -> [MessageView] {
        var messages: [MessageView] = []
        var n = 0
        for text in awkwardStrings {
            for recordName in [nil, text, "rec"] {
                n += 1
                messages.append(MessageView(
                    seq: n * 7919, epoch: n % 3 == 0 ? 0 : Int.max - n, sender: text, messageType: n % 2 == 0 ? .app : .commit,
                    hash: String(repeating: "ab", count: 32), size: n % 4 == 0 ? 0 : -n,
                    sentAt: Date(timeIntervalSince1970: 1_763_717_400.123_456 + Double(n) * 86_400.017), recordName: recordName))
            }
        }
        messages.append(MessageView(
            seq: Int.min, epoch: Int.min, sender: "s", messageType: .app, hash: "h", size: Int.max,
            sentAt: Date(timeIntervalSince1970: -1_000_000.25), recordName: nil))
        return messages
    }

    @Test func messageEventMatchesJSONEncoder() throws {
        for (index, message) in Self.messages().enumerated() {
            let event = MessageEvent(convoId: Self.awkwardStrings[index % Self.awkwardStrings.count], message: message)
            #expect(event.wireJSON() == (try Self.referenceBytes(event)))
            #expect(try ConvoEventPayload.message(event).encodedData() == Data(try Self.referenceBytes(event)))
        }
    }

    static let providers: [StorageProvider] = {
        var providers: [StorageProvider] = [.defaultProvider]
        for text in awkwardStrings {
            providers.append(StorageProvider(type: text))
            providers.append(StorageProvider(type: "zone-http", endpoint: text))
        }
        providers.append(StorageProvider(
            type: "folder", endpoint: "https://zones.example/a/b",
            config: ["path": .string("/x"), "n": .number(1.5), "flags": .array([.bool(true), .null]), "o": .object(["k": .number(2)])]))
        providers.append(StorageProvider(type: "cloudkit", config: [:]))
        return providers
    }()

    @Test func sendMessageOutputMatchesJSONEncoder() throws {
        let providers = Self.providers
        for count in [0, 1, 3, providers.count] {
            for offset in 0..<providers.count {
                let recipients = (0..<count).map { index in
                    Recipient(did: Self.awkwardStrings[(index + offset) % Self.awkwardStrings.count], storage: providers[(index + offset) % providers.count])
                }
                let output = SendMessageOutput(
                    seq: offset * 1_000_003, epoch: offset, recipients: recipients,
                    serverTime: Date(timeIntervalSince1970: 1_763_717_400.987_654 + Double(offset) * 3_600.5))
                #expect(try output.wireJSON() == (try Self.referenceBytes(output)))
            }
        }
    }

    @Test func writerEscapesEveryByteAsJSONEncoderDoes() throws {
        for byte in UInt8(0)...UInt8(0x7F) {
            let text = "a" + String(UnicodeScalar(byte)) + "b"
            var writer = WireJSONWriter()
            writer.string(text)
            #expect(writer.bytes == (try Self.referenceBytes(text)), "byte \(byte)")
        }
        for value in [0, 1, -1, 42, Int.min, Int.max, 1_000_000] {
            var writer = WireJSONWriter()
            writer.integer(value)
            #expect(writer.bytes == (try Self.referenceBytes(value)))
        }
    }

    /// The wire JSON decodes back to the same values (the client's side of the contract).
    @Test func outputsRoundTrip() throws {
        let output = SendMessageOutput(
            seq: 9, epoch: 2, recipients: Self.providers.map { Recipient(did: "did:key:z6Mkx", storage: $0) },
            serverTime: Date(timeIntervalSince1970: 1_763_717_400.5))
        #expect(try WireJSON.decoder().decode(SendMessageOutput.self, from: Data(try output.wireJSON())) == output)
    }
}
