import ArgumentParser
import Crypto
import EditingTraces
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintSnapshot
import ImprintStore
import ImprintTestSupport

/// `imprint-bench snapshot`: reviewer snapshots exported in Swift and opened in headless
/// Chromium and Firefox ESR (Tests/Interop/review_browser.py: Debian's chromium through
/// selenium, Debian's firefox-esr through Marionette, both from .venv-peers).
/// Two documents: the final text of a sequential trace (its anchor map from the real typing
/// history) and a generated ~1 MB Markdown document typed by three devices with 200
/// comments. Reports medians: export time, file size against gzip -9 of the plain text, and in
/// the browser the PBKDF2 time and, separately, decrypt + inflate + parse + render to laid-out
/// text (`imprint-decrypt-start` → `imprint-readable`).
struct SnapshotBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Export reviewer snapshots and open them in headless Chromium and Firefox.")

    @Argument(help: "A sequential trace file (.json or .json.gz).") var trace: String
    @Option(help: "Size of the generated document, bytes.") var generatedBytes = 1_000_000
    @Option(help: "Comments on the generated document.") var comments = 200
    @Option(help: "Runs; medians are reported.") var runs = 5
    @Option(help: "The python with selenium.") var python = ".venv-peers/bin/python"
    @Option(help: "The browser driver script.") var driver = "Tests/Interop/review_browser.py"
    @Option(help: "Browsers to open the snapshots in, comma-separated (chromium, firefox); the first is the headline.")
    var browsers = "chromium,firefox"
    @Flag(help: "Print one JSON object.") var json = false

    static let password = "benchmark passphrase, long enough"

    func run() throws {
        let scratch = NSTemporaryDirectory() + "imprint-bench-snapshot-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let loaded = try EditingTrace.load(path: trace)
        guard !loaded.isConcurrent else { throw ValidationError("snapshot: a sequential trace is needed") }

        var results: [String] = []
        let paper = try traceBundle(loaded, at: scratch + "/trace.imprint")
        results.append(try measure(name: loaded.name, bundle: paper, scratch: scratch))
        let generated = try generatedBundle(at: scratch + "/generated.imprint")
        results.append(try measure(name: "generated", bundle: generated, scratch: scratch))
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "?"
        if json {
            print("{\"runs\": \(runs), \"load\": \(load), \"documents\": [\(results.joined(separator: ", "))]}")
        } else {
            print("load average \(load)")
        }
    }

    /// The trace's final text typed into a bundle's body, one change per trace transaction.
    func traceBundle(_ trace: EditingTrace, at path: String) throws -> DocumentBundle {
        let bundle = try DocumentBundle.create(at: path, device: try DeviceID("author"), title: trace.name)
        var reader = trace.transactionReader()
        let body = bundle.body
        while reader.hasNext {
            try bundle.document.change { tx in
                try reader.readTransaction { pos, del, ins in try tx.splice(body, at: pos, delete: del, insert: ins) }
            }
        }
        _ = try bundle.persistNewChanges()
        guard try bundle.text() == trace.endContent else { throw ValidationError("the replayed text differs from endContent") }
        return bundle
    }

    /// ~`generatedBytes` of Markdown typed in bursts by three devices at seeded places, and
    /// `comments` comments on words spread through it.
    func generatedBundle(at path: String) throws -> DocumentBundle {
        var rng = SplitMix64(seed: 0x5EED_5A95)
        let devices = try ["laptop", "phone", "tablet"].map { try DeviceID($0) }
        let first = try DocumentBundle.create(at: path, device: devices[0], title: "A generated report")
        let bundles = [first] + (try devices.dropFirst().map { try DocumentBundle.open(at: path, device: $0) })
        let words = ["river", "heron", "bend", "water", "stone", "reed", "current", "bank", "silt", "light", "morning", "shadow",
                     "**bold**", "*quiet*", "`code`", "[link](https://example.com)", "eddy", "willow", "ferry", "delta"]
        var length = 0
        var paragraph = 0
        while length < generatedBytes {
            let bundle = bundles[Int(rng.next() % 3)]
            var text = paragraph % 12 == 0 ? "\n## Section \(paragraph / 12 + 1)\n\n" : ""
            if paragraph % 7 == 3 { text += "- " + (0..<8).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ") + "\n" }
            text += (0..<(40 + Int(rng.next() % 60))).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ") + ".\n\n"
            let current = try bundle.document.length(bundle.body)
            // Mostly at the end, sometimes in the middle (another device's earlier paragraph).
            let at = rng.next() % 4 == 0 ? Int(rng.next() % UInt64(current + 1)) : current
            try bundle.insert(text, at: at)
            length += text.utf8.count
            paragraph += 1
            if paragraph % 50 == 0 { for other in bundles where other !== bundle { try other.document.merge(bundle.document) } }
        }
        let owner = try DocumentBundle.open(at: path, device: devices[0])
        let ownerKey = P256.KeyAgreement.PrivateKey()
        let content = try ReviewExport.export(owner, options: .init(password: Self.password, commentKey: ownerKey.publicKey)).content
        let total = content.body.unicodeScalars.count
        var made: [ReviewComment] = []
        for index in 0..<comments {
            let start = Int(rng.next() % UInt64(max(1, total - 40)))
            let end = start + 5 + Int(rng.next() % 30)
            let quote = String(String.UnicodeScalarView(Array(content.body.unicodeScalars)[start..<end]))
            made.append(ReviewComment(id: "bench-\(index)", snapshotId: content.snapshotId, kind: .comment, author: "Reviewer \(index % 7)",
                                      text: "Comment \(index): please check this passage.", start: content.anchors.cursor(at: start, side: .before),
                                      end: content.anchors.cursor(at: end - 1, side: .after), quote: quote, createdAt: 1_790_000_000_000 + Int64(index)))
        }
        try CommentImport.merge(made, into: owner)
        return owner
    }

    func measure(name: String, bundle: DocumentBundle, scratch: String) throws -> String {
        let ownerKey = P256.KeyAgreement.PrivateKey()
        var exportTimes: [Double] = []
        var snapshot: ExportedReviewSnapshot?
        for _ in 0..<max(1, runs) {
            let (ms, s) = try Clock.measure { try ReviewExport.export(bundle, options: .init(password: Self.password, commentKey: ownerKey.publicKey)) }
            exportTimes.append(ms)
            snapshot = s
        }
        let exported = snapshot!
        let html = Array(exported.html.utf8)
        let page = scratch + "/\(name).html"
        try Data(html).write(to: URL(fileURLWithPath: page))
        let text = try bundle.text()
        let gzipBytes = try gzipSize(Array(text.utf8))

        var measured: [(browser: String, marks: BrowserMarks)] = []
        for browser in browsers.split(separator: ",").map({ String($0).trimmingCharacters(in: .whitespaces) }) {
            measured.append((browser, try openInBrowser(page: page, browser: browser, scratch: scratch)))
        }
        guard let first = measured.first else { throw ValidationError("--browsers names no browser") }
        let (kdf, open, decrypt, render, commentsShown) = (first.marks.kdf, first.marks.open, first.marks.decrypt, first.marks.render, first.marks.commentsShown)
        let fields = [
            "\"document\": \"\(name)\"", "\"text_bytes\": \(text.utf8.count)", "\"comments\": \(exported.content.comments.count)",
            "\"anchor_runs\": \(exported.content.anchors.runs.count / 3)", "\"content_json_bytes\": \(exported.plaintextBytes)",
            "\"html_bytes\": \(html.count)", "\"gzip9_text_bytes\": \(gzipBytes)",
            "\"export_ms\": \(Clock.format(Clock.median(exportTimes)))",
            "\"browser_kdf_ms\": \(Clock.format(Clock.median(kdf)))", "\"browser_open_ms\": \(Clock.format(Clock.median(open)))",
            "\"browser_decrypt_parse_ms\": \(Clock.format(Clock.median(decrypt)))", "\"browser_build_dom_ms\": \(Clock.format(Clock.median(render)))",
            "\"browser_comments_ms\": \(Clock.format(Clock.median(commentsShown)))",
            "\"browser_open_ms_all\": [\(open.map { Clock.format($0) }.joined(separator: ", "))]",
            "\"browser\": \"\(first.browser)\"",
            "\"browsers\": {" + measured.map { m in
                "\"\(m.browser)\": {\"kdf_ms\": \(Clock.format(Clock.median(m.marks.kdf))), \"kdf_first_ms\": \(Clock.format(m.marks.kdf.first ?? 0)), \"open_ms\": \(Clock.format(Clock.median(m.marks.open)))}"
            }.joined(separator: ", ") + "}",
        ]
        if !json {
            print("\(name): \(text.utf8.count) bytes of text, \(exported.content.comments.count) comments, \(exported.content.anchors.runs.count / 3) anchor runs")
            print("  export \(Clock.format(Clock.median(exportTimes))) ms (PBKDF2 included); file \(html.count) bytes vs gzip -9 of the text \(gzipBytes)")
            for m in measured {
                print("  \(m.browser): PBKDF2 \(Clock.format(Clock.median(m.marks.kdf))) ms (first \(Clock.format(m.marks.kdf.first ?? 0)) ms); decrypt + inflate + render to readable \(Clock.format(Clock.median(m.marks.open))) ms (median of \(m.marks.open.count); decrypt + inflate + parse \(Clock.format(Clock.median(m.marks.decrypt))), DOM \(Clock.format(Clock.median(m.marks.render))))")
            }
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// The viewer's performance marks over `runs` unlocks of `page` in one browser session.
    /// Firefox (NSS) caches a PBKDF2 result for the same password, salt and count, so only
    /// its first unlock derives: read its `kdf` first value, not the median.
    struct BrowserMarks {
        var kdf: [Double] = [], open: [Double] = [], decrypt: [Double] = [], render: [Double] = [], commentsShown: [Double] = []
    }

    func openInBrowser(page: String, browser: String, scratch: String) throws -> BrowserMarks {
        var steps: [String] = []
        for run in 0..<max(1, runs) {
            if run > 0 { steps.append(#"{"do": "reload"}"#) }
            steps.append(#"{"do": "unlock", "password": "\#(Self.password)"}"#)
            steps.append(#"{"do": "marks"}"#)
        }
        try Data("[\(steps.joined(separator: ","))]".utf8).write(to: URL(fileURLWithPath: scratch + "/steps.json"))
        let status = try runDriver(["--page", page, "--steps", scratch + "/steps.json", "--out", scratch + "/out.json", "--browser", browser],
                                   log: scratch + "/driver.log")
        guard status == 0, let out = FileManager.default.contents(atPath: scratch + "/out.json"),
              let object = try JSONSerialization.jsonObject(with: out) as? [String: Any], let stepResults = object["steps"] as? [[String: Any]]
        else { throw ValidationError("the browser driver failed: \((try? String(contentsOfFile: scratch + "/driver.log", encoding: .utf8)) ?? "")") }
        if let error = stepResults.last?["error"] { throw ValidationError("\(browser): \(error)") }
        var marks = BrowserMarks()
        for step in stepResults where step["do"] as? String == "marks" {
            guard let m = step["marks"] as? [String: Double], let k0 = m["imprint-kdf-start"], let k1 = m["imprint-kdf-end"],
                  let d = m["imprint-decrypt-start"], let r = m["imprint-readable"] else { throw ValidationError("marks missing: \(step)") }
            marks.kdf.append(k1 - k0)
            marks.open.append(r - d)
            if let decrypted = m["imprint-decrypted"], let rendered = m["imprint-rendered"] {
                marks.decrypt.append(decrypted - d)
                marks.render.append(rendered - decrypted)
                if let shown = m["imprint-comments-shown"] { marks.commentsShown.append(shown - rendered) }
            }
        }
        let unlocks = stepResults.filter { $0["do"] as? String == "unlock" }
        guard unlocks.allSatisfy({ $0["state"] as? String == "open" }) else { throw ValidationError("\(browser): the page did not open: \(unlocks)") }
        return marks
    }

    /// gzip -9 of `bytes`, through the system's gzip.
    func gzipSize(_ bytes: [UInt8]) throws -> Int {
        let input = NSTemporaryDirectory() + "imprint-bench-gzip-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        defer { try? FileManager.default.removeItem(atPath: input); try? FileManager.default.removeItem(atPath: input + ".gz") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-9", "-k", "-n", input]
        try process.run()
        process.waitUntilExit()
        return Int((try FileManager.default.attributesOfItem(atPath: input + ".gz")[.size] as? NSNumber)?.intValue ?? 0)
    }

    func runDriver(_ arguments: [String], log: String) throws -> Int32 {
        _ = FileManager.default.createFile(atPath: log, contents: nil)  // the FileHandle below throws if it failed
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [driver] + arguments
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
