import Foundation
import ImprintServer
import ImprintServerTestSupport
import ImprintSync
import PostgresNIO
import Testing

/// No plaintext on any server: marker strings planted in a document's title and edits are
/// searched for, raw, base64 and hex, in every byte the server stores (the SQLite database
/// with its WAL and journal, or every table of the PostgreSQL database; and the zone
/// service's asset files) after two people shared and co-edited the document.
extension SyncSuites {
@Suite struct NoPlaintextOnServerTests {
    static let markers = ["TITLE-MARKER-9f2c", "BODY-MARKER-41d7", "EDIT-MARKER-bb03", "REPLY-MARKER-6e15"]

    @Test(arguments: StoreKind.available)
    func markersNeverReachTheServer(kind: StoreKind) async throws {
        var stored: [(name: String, bytes: [UInt8])] = []
        var convo = ""
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(title: Self.markers[0], text: "Notes: \(Self.markers[1])")
            let aliceDoc = try await alice.share()
            convo = aliceDoc.convoId
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(convo)
            try alice.edit { try $0.insert(" \(Self.markers[2])", at: 0) }
            try await aliceDoc.push()
            try await bobDoc.pull()
            try bob.edit { try $0.insert(" \(Self.markers[3])", at: 0) }
            try await bobDoc.push()
            try await aliceDoc.pull()
            // The markers are really in the document both people hold.
            for person in [alice, bob] {
                let text = try person.text()
                for marker in Self.markers.dropFirst() { #expect(text.contains(marker), "\(person.name) lacks \(marker)") }
            }
            if case .postgres(let location) = server.database { stored += try await Self.dump(location) }
            // The scanner finds a marker where it is: in the people's own bundles.
            let clientFiles = Self.files(under: server.directory.file("people")).flatMap(\.bytes)
            #expect(Self.contains(clientFiles, Array(Self.markers[1].utf8)), "the scanner cannot find a marker that is there")
            // The SQLite database with its WAL and shared-memory files, and every asset file.
            stored += Self.files(under: server.serverData)
        }
        let everything = stored.flatMap(\.bytes)
        // The scan reads real data: the convo id is stored in the clear (it names the zone).
        #expect(Self.contains(everything, Array(convo.utf8)), "the scan found not even the convo id: it read nothing")
        for marker in Self.markers {
            for form in Self.encodings(of: marker) {
                for file in stored where Self.contains(file.bytes, form) {
                    Issue.record("\(marker) found (as \(String(decoding: form, as: UTF8.self))) in \(file.name)")
                }
            }
        }
    }
}
}

extension SyncSuites.NoPlaintextOnServerTests {
    /// The raw marker, its hex in both cases, and the stable middle of its base64 at each of
    /// the three alignments it may have inside a longer base64 text.
    static func encodings(of marker: String) -> [[UInt8]] {
        let raw = Array(marker.utf8)
        var forms = [raw, Array(raw.map { String(format: "%02x", $0) }.joined().utf8), Array(raw.map { String(format: "%02X", $0) }.joined().utf8)]
        for shift in 0..<3 {
            let encoded = Data([UInt8](repeating: 0, count: shift) + raw).base64EncodedString()
            // Drop the characters that depend on neighbouring bytes (the first 4 cover the padding bytes, the last 4 the tail).
            let middle = encoded.dropFirst(4).dropLast(4)
            if middle.count >= 8 { forms.append(Array(middle.utf8)) }
        }
        return forms
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    /// Every regular file under `root`, with its bytes.
    static func files(under root: String) -> [(name: String, bytes: [UInt8])] {
        guard !root.isEmpty, let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [(String, [UInt8])] = []
        for case let relative as String in walker {
            let path = root + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: path) else { continue }
            out.append((path, Array(data)))
        }
        return out
    }

    /// Every row of every table of the database, as text (bytea as hex).
    static func dump(_ location: DatabaseLocation.PostgresLocation) async throws -> [(name: String, bytes: [UInt8])] {
        let connection = try await PostgresTestDatabase.connect(to: location)
        defer { Task { try? await connection.close() } }
        var tables: [String] = []
        for try await (name) in try await connection.query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'", logger: testLogger).decode(String.self) {
            tables.append(name)
        }
        var out: [(String, [UInt8])] = []
        for table in tables {
            var bytes: [UInt8] = []
            for try await (row) in try await connection.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM \"\(table)\" t"), logger: testLogger).decode(String.self) {
                bytes += Array(row.utf8) + [10]
            }
            out.append(("table \(table)", bytes))
        }
        #expect(tables.count >= 5, "the dump found the server's tables")
        return out
    }
}
