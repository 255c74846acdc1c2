import ImprintEncoding
import ArgumentParser
import Crypto
import EditingTraces
import Foundation
@_spi(Benchmarks) import ImprintCRDT

/// `imprint-bench trace`: replays an editing trace and reports medians (contract in
/// `shared/contracts/cli.md`).
struct TraceBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace", abstract: "Replay an editing trace: apply, merge, save, load.")

    @Argument(help: "A trace file (.json or .json.gz).") var path: String
    @Option(help: "Runs; medians are reported.") var runs = 5
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        if !json { print("rss at start: \(Clock.format(Clock.peakRSSMegabytes())) MB") }
        let trace = try EditingTrace.load(path: path)
        if !json { print("rss after loading the trace: \(Clock.format(Clock.peakRSSMegabytes())) MB") }
        var apply: [Double] = []
        var merge: [Double] = []
        var load: [Double] = []
        var loadFull: [Double] = []
        var saveBytes = 0
        var savedBytes: [UInt8] = []
        var finalText = ""
        for _ in 0..<max(1, runs) {
            // Each run starts from a clean heap: return what the last run freed to the system.
            #if os(Linux)
            _ = glibcMallocTrim(0)
            #endif
            // The contract's apply: every patch as a local edit, then read the text.
            let (t1, (doc, text)) = try Clock.measure { () -> (Document, String) in
                let doc = try TraceReplay.replay(trace)
                return (doc, try TraceReplay.text(of: doc))
            }
            apply.append(t1)
            if !json { print("rss after replay: \(Clock.format(Clock.peakRSSMegabytes())) MB") }
            finalText = text
            let saved = doc.save()
            saveBytes = saved.count
            savedBytes = saved
            if !json { print("rss after save: \(Clock.format(Clock.peakRSSMegabytes())) MB") }
            let (t2, merged) = try Clock.measure { () -> String in
                let fresh = Document(actor: ActorID.named("merge-target"))
                try fresh.merge(saved)
                return try TraceReplay.text(of: fresh)
            }
            merge.append(t2)
            if !json { print("rss after merge: \(Clock.format(Clock.peakRSSMegabytes())) MB") }
            let (t3, loaded) = try Clock.measure { () -> String in
                let loaded = try Document.load(saved)
                return try TraceReplay.text(of: loaded)
            }
            load.append(t3)
            // Load, then decode and validate the whole history too (what the first edit,
            // sync or save of a just-loaded document pays on top of `load_ms`).
            let (t4, _) = try Clock.measure { () -> String in
                let loaded = try Document.load(saved)
                try loaded.finishLoading()
                return try TraceReplay.text(of: loaded)
            }
            loadFull.append(t4)
            guard merged == text, loaded == text else {
                throw ValidationError("merged or loaded text differs from the replayed text")
            }
        }
        // Steady state: the memory a loaded document holds once its text has been read (the
        // saved bytes and the text are not counted), after the runs' garbage is returned.
        let residentBefore = residentBytesAfterTrim()
        let kept = try Document.load(savedBytes)
        _ = try TraceReplay.text(of: kept)
        let loadedBytes = residentBytesAfterTrim() - residentBefore
        withExtendedLifetime(kept) {}
        let sha = Hex.encode(SHA256.hash(data: Array(finalText.utf8)))
        let result: [(String, String)] = [
            ("trace", "\"\(trace.name)\""),
            ("patches", "\(trace.patchCount)"),
            ("apply_ms", Clock.format(Clock.median(apply))),
            ("merge_ms", Clock.format(Clock.median(merge))),
            ("save_bytes", "\(saveBytes)"),
            ("load_ms", Clock.format(Clock.median(load))),
            ("load_full_ms", Clock.format(Clock.median(loadFull))),
            ("peak_rss_mb", Clock.format(Clock.peakRSSMegabytes())),
            ("loaded_doc_mb", Clock.format(Double(loadedBytes) / 1_048_576)),
            ("final_sha256", "\"\(sha)\""),
            ("matches_end_content", finalText == trace.endContent ? "true" : "false"),
        ]
        if json {
            print("{" + result.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            for (k, v) in result { print("\(k.padding(toLength: 20, withPad: " ", startingAt: 0)) \(v)") }
        }
        if finalText != trace.endContent { throw ExitCode(1) }
    }
}

/// `imprint-bench format-stats`: where a saved trace document's bytes and load time go.
struct FormatStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "format-stats", abstract: "Saved-format breakdown for a trace.")
    @Argument var path: String
    @Option(help: "Instead of the breakdown, time this many loads (for profiling load alone).")
    var loadRuns = 0
    @Flag(help: "With --load-runs: also decode and validate the whole history (finishLoading).")
    var full = false
    @Flag(help: "With --load-runs: load the save framed as builds before the XXH64 checksum framed it (SHA-256).")
    var sha256Frame = false

    func run() throws {
        let trace = try EditingTrace.load(path: path)
        let doc = try TraceReplay.replay(trace)
        var bytes = doc.save()
        if sha256Frame {
            // Flag bit 1 cleared, the checksum the first 8 bytes of SHA-256 (`docs/format.md`).
            bytes[5] &= ~2
            bytes.replaceSubrange(6..<14, with: Array(SHA256.hash(data: bytes[14...])).prefix(8))
        }
        if loadRuns > 0 {
            var times: [Double] = []
            let faultsBefore = ProcessCPU.minorFaults()
            for _ in 0..<loadRuns {
                times.append(try Clock.measure {
                    let loaded = try Document.load(bytes)
                    if full { try loaded.finishLoading() }
                    _ = try TraceReplay.text(of: loaded)
                }.0)
            }
            // Page faults tell a load that reuses the heap from one whose memory the allocator
            // handed back to the kernel in between (glibc trims a freed heap top).
            let faults = Double(ProcessCPU.minorFaults() - faultsBefore) / Double(loadRuns)
            // The first load of a process also pays one-time costs (type metadata, the code's
            // pages): what an app opening its one document waits for.
            print("load\(full ? " + history" : "") → text: median \(Clock.format(Clock.median(times))) ms over \(loadRuns) runs (first \(Clock.format(times[0])) ms), \(Int(faults.rounded())) page faults a load")
            return
        }
        let s = try FormatStatistics.measure(bytes)
        print("compressed \(s.compressedBytes) payload \(s.payloadBytes) spans \(s.spanCount)")
        print(String(format: "unframe %.3f ms, decode %.3f ms, text %.3f ms", s.unframeMs, s.decodeMs, s.textMs))
        for (k, v) in s.sectionBytes.sorted(by: { $0.key < $1.key }) { print("  \(k): \(v)") }
    }
}

/// Resident bytes of this process after freed heap pages are returned to the system
/// (Linux: `/proc/self/statm`); 0 where unknown. The growth between two calls is what the
/// objects allocated in between hold, to the page.
func residentBytesAfterTrim() -> Int {
    #if os(Linux)
    _ = glibcMallocTrim(0)
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return 0
    #endif
}

#if os(Linux)
/// glibc's `malloc_trim` (not exported by the Glibc module): returns freed heap pages.
@_silgen_name("malloc_trim")
func glibcMallocTrim(_ pad: Int) -> Int32
#endif
