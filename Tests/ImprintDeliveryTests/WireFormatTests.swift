import Foundation
import ImprintDelivery
import Testing

@Suite struct WireFormatTests {
    @Test func sseParserHandlesSplitsCommentsAndCRLF() {
        var parser = ServerSentEventParser()
        let stream = ": hello\r\nid: 5\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 6\nevent: welcome\ndata: {}\n\n"
        var events: [ServerSentEvent] = []
        for chunk in Array(stream.utf8).chunked(3) { events += parser.feed(chunk) }
        #expect(events == [
            ServerSentEvent(id: "5", event: "message", data: "{\"a\":\n1}"),
            ServerSentEvent(id: "6", event: "welcome", data: "{}"),
        ])
    }

    @Test func messageEventFlattensMessageView() throws {
        let message = MessageView(
            seq: 3, epoch: 1, sender: "did:key:z6Mk", messageType: .commit, hash: String(repeating: "a", count: 64), size: 9,
            sentAt: Date(timeIntervalSince1970: 1_800_000_000.5), recordName: nil)
        let payload = ConvoEventPayload.message(MessageEvent(convoId: "c1", message: message))
        let json = try JSONSerialization.jsonObject(with: try payload.encodedData()) as? [String: Any]
        #expect(json?["convoId"] as? String == "c1")
        #expect(json?["seq"] as? Int == 3)
        #expect(json?["messageType"] as? String == "commit")
        #expect(json?["sentAt"] as? String == "2027-01-15T08:00:00.500Z")
        #expect(try ConvoEventPayload(name: "message", data: try payload.encodedData()) == payload)
    }

    @Test func datesAndBinaryFollowTheWireConventions() throws {
        let input = PublishKeyPackageInput(keyPackage: Data([0, 1, 2, 250]), cipherSuite: 1, expiresAt: Date(timeIntervalSince1970: 0))
        let text = String(decoding: try WireJSON.encoder().encode(input), as: UTF8.self)
        #expect(text == #"{"cipherSuite":1,"expiresAt":"1970-01-01T00:00:00.000Z","keyPackage":"AAEC+g=="}"#)
        let plain = try WireJSON.decoder().decode(
            PublishKeyPackageInput.self, from: Data(#"{"cipherSuite":1,"expiresAt":"1970-01-01T00:00:10Z","keyPackage":"AAEC+g=="}"#.utf8))
        #expect(plain.expiresAt == Date(timeIntervalSince1970: 10))
        #expect(throws: DecodingError.self) {
            try WireJSON.decoder().decode(PublishKeyPackageInput.self, from: Data(#"{"cipherSuite":1,"expiresAt":"x","keyPackage":"AAEC+g=="}"#.utf8))
        }
    }

    @Test func methodsHaveNSIDsAndKinds() {
        #expect(DeliveryMethod.sendMessage.nsid == "blue.catbird.mls.sendMessage")
        #expect(DeliveryMethod.getMessages.path == "/xrpc/blue.catbird.mls.getMessages")
        #expect(DeliveryMethod(nsid: "blue.catbird.mls.getWelcome") == .getWelcome)
        #expect(DeliveryMethod(nsid: "com.example.getWelcome") == nil)
        #expect(DeliveryMethod.allCases.filter { !$0.isProcedure }.count == 8)
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
