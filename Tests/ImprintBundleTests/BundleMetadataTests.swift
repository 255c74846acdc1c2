import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport

@Suite struct BundleMetadataTests {
    let created = Date(timeIntervalSince1970: 1_790_000_000)

    @Test func roundTripsThroughTheFile() throws {
        let dir = TemporaryDirectory()
        let metadata = BundleMetadata(documentID: "doc-1", title: "Paper", created: created,
                                      modified: created.addingTimeInterval(60), authors: ["b", "a", "b"])
        #expect(metadata.authors == ["a", "b"])
        try metadata.write(to: dir.file("metadata.json"))
        let read = try BundleMetadata.read(at: dir.file("metadata.json"))
        #expect(read == metadata)
        let text = String(decoding: try readFile(dir.file("metadata.json")), as: UTF8.self)
        #expect(text.contains("\"documentId\" : \"doc-1\""))
        #expect(text.contains("\"created\" : \"2026-09-21T"))
        #expect(text.contains("\"formatVersion\" : 1"))
    }

    @Test func unknownKeysSurviveARewrite() throws {
        let dir = TemporaryDirectory()
        let newer = """
        {"formatVersion": 3, "minimumReaderVersion": 1, "documentId": "d", "title": "T",
         "created": "2026-01-01T00:00:00Z", "modified": "2026-01-02T00:00:00.250Z",
         "authors": ["x"], "color": "blue", "future": {"nested": [1, true, null, "s"]}}
        """
        try writeFile(dir.file("metadata.json"), Array(newer.utf8))
        var metadata = try BundleMetadata.read(at: dir.file("metadata.json"))
        #expect(metadata.formatVersion == 3)
        #expect(metadata.extra["color"] == .string("blue"))
        metadata.title = "Renamed"
        try metadata.write(to: dir.file("metadata.json"))
        let reread = try BundleMetadata.read(at: dir.file("metadata.json"))
        #expect(reread.title == "Renamed")
        #expect(reread.formatVersion == 3)
        #expect(reread.extra["future"] == .object(["nested": .array([.number(1), .bool(true), .null, .string("s")])]))
    }

    @Test func refusesBundlesThatNeedANewerReader() throws {
        let json = #"{"formatVersion": 9, "minimumReaderVersion": 9, "documentId": "d", "created": "2026-01-01T00:00:00Z", "modified": "2026-01-01T00:00:00Z"}"#
        let error = #expect(throws: BundleError.self) { try BundleMetadata.decode(Array(json.utf8)) }
        #expect(error?.code == .unsupportedVersion)
    }

    @Test func corruptMetadataIsATypedError() throws {
        for bad in ["", "{", "[]", #"{"formatVersion": "one"}"#, #"{"formatVersion": 1, "documentId": "d", "created": "yesterday", "modified": "x"}"#] {
            let error = #expect(throws: BundleError.self, "\(bad)") { try BundleMetadata.decode(Array(bad.utf8)) }
            #expect(error?.code == .corrupt)
        }
    }

    @Test func conflictingCopiesMerge() {
        let a = BundleMetadata(documentID: "d", title: "Old title", created: created, modified: created.addingTimeInterval(10),
                               authors: ["a"], extra: ["x": .number(1), "onlyA": .bool(true)])
        let b = BundleMetadata(documentID: "d", title: "New title", created: created.addingTimeInterval(5), modified: created.addingTimeInterval(20),
                               authors: ["b"], extra: ["x": .number(2)])
        for merged in [a.merged(with: b), b.merged(with: a)] {
            #expect(merged.title == "New title")
            #expect(merged.created == created)
            #expect(merged.modified == created.addingTimeInterval(20))
            #expect(merged.authors == ["a", "b"])
            #expect(merged.extra == ["x": .number(2), "onlyA": .bool(true)])
        }
    }
}
