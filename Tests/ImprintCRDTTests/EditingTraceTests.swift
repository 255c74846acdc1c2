import EditingTraces
import Foundation
import Testing

/// The trace loader's compact patch stream gives back exactly what the JSON holds.
@Suite("Editing trace loader")
struct EditingTraceTests {
    private func load(_ json: String) throws -> EditingTrace {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("trace-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try EditingTrace.load(path: url.path)
    }

    private func flatten(_ trace: EditingTrace) -> [[String]] {
        trace.allTransactions().map { $0.map { "\($0.position)/\($0.deleteCount)/\($0.insert)" } }
    }

    @Test("single-patch transactions: jumps backwards and forwards, deletes, escapes, non-ASCII")
    func sequential() throws {
        let trace = try load(#"""
        {"startContent": "", "endContent": "x",
         "txns": [
           {"patches": [[0, 0, "héllo 🌍"]]},
           {"patches": [[7, 0, "!"]]},
           {"patches": [[2, 3, ""]]},
           {"patches": [[100000, 0, "a\"\\\n\u00e9\ud83d\ude00"]]},
           {"patches": [[0, 1, "z"]]}
         ]}
        """#)
        #expect(trace.transactionCount == 5)
        #expect(trace.patchCount == 5)
        #expect(!trace.isConcurrent)
        #expect(trace.parents(of: 3) == [])
        #expect(flatten(trace) == [
            ["0/0/héllo 🌍"], ["7/0/!"], ["2/3/"], ["100000/0/a\"\\\né😀"], ["0/1/z"],
        ])
    }

    @Test("multi-patch and empty transactions, parents and agents of a concurrent trace")
    func concurrent() throws {
        let trace = try load(#"""
        {"kind": "concurrent", "numAgents": 2, "endContent": "",
         "txns": [
           {"parents": [], "agent": 0, "patches": [[0, 0, "ab"]]},
           {"parents": [0], "agent": 1, "patches": [[2, 0, "c"], [0, 1, ""], [1, 0, "dé"]]},
           {"parents": [0], "agent": 0, "patches": []},
           {"parents": [1, 2], "agent": 1, "patches": [[3, 0, "e"]]}
         ]}
        """#)
        #expect(trace.isConcurrent)
        #expect(trace.transactionCount == 4)
        #expect(trace.patchCount == 5)
        #expect(flatten(trace) == [["0/0/ab"], ["2/0/c", "0/1/", "1/0/dé"], [], ["3/0/e"]])
        #expect((0..<4).map(trace.parents(of:)) == [[], [0], [0], [1, 2]])
        #expect((0..<4).map(trace.agent(of:)) == [0, 1, 0, 1])
    }

    @Test("the reader walks the real traces patch by patch")
    func realTraces() throws {
        let directory = EditingTrace.sharedDirectory()
        let trace = try EditingTrace.load(path: "\(directory)/sveltecomponent.json.gz")
        var reader = trace.transactionReader()
        var patches = 0
        while reader.hasNext { reader.readTransaction { p, d, _ in #expect(p >= 0 && d >= 0); patches += 1 } }
        #expect(patches == trace.patchCount)
        #expect(reader.transactionIndex == trace.transactionCount)
    }
}
