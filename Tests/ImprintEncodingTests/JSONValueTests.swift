import Foundation
import ImprintEncoding
import Testing

@Suite struct JSONValueTests {
    @Test func serializesCompactlyWithSortedKeys() {
        let value: JSONValue = .object([
            "b": .array([.number(1), .number(2.5), .bool(true), .null]),
            "a": .string("x\"y\\\n\u{1}"),
        ])
        #expect(value.serialized == #"{"a":"x\"y\\\n\u0001","b":[1,2.5,true,null]}"#)
        #expect(JSONValue.number(.infinity).serialized == "null")
    }

    @Test func codableRoundTripKeepsUnknownShapes() throws {
        let text = #"{"k":[1,"two",{"three":null}],"flag":false}"#
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(decoded == .object(["k": .array([.number(1), .string("two"), .object(["three": .null])]), "flag": .bool(false)]))
        let again = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(decoded))
        #expect(again == decoded)
    }
}
