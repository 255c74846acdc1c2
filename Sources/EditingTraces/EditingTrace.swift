import CZlib
import Foundation
import ImprintEncoding

/// An editing trace from `shared/traces` (the josephg/editing-traces format): a list of
/// transactions of `[position, deleteCount, insertText]` patches, positions in code points.
///
/// Parsed while the gzip stream inflates and stored as one compact byte stream, so the
/// 16 MB `automerge-paper` trace (260k patches) costs about 1.3 MB of memory: the
/// benchmark process should measure the engine, not the harness. Each patch is
/// `uleb zigzag(position - predicted) | uleb deleteCount | uleb insertByteCount | UTF-8`,
/// where `predicted` is where the previous patch's insert ended (0 when typing on).
public struct EditingTrace: Sendable {
    public struct Patch: Sendable {
        public var position: Int
        public var deleteCount: Int
        public var insert: String
    }

    public var name: String
    public var isConcurrent: Bool
    public var agentCount: Int
    public var endContent: String

    /// Every patch in order (format above).
    var patchData: [UInt8] = []
    /// Patches per transaction as ULEB128, back to back; empty when every transaction has
    /// exactly one patch.
    var transactionSizes: [UInt8] = []
    public internal(set) var patchCount = 0
    var transactions = 0
    var parentStart: [Int32] = [0]
    var parentList: [Int32] = []
    var agents: [Int32] = []

    public var transactionCount: Int { transactions }

    /// A reader positioned at the first transaction.
    public func transactionReader() -> TransactionReader { TransactionReader(trace: self) }

    /// Every transaction's patches, decoded (tests and small traces; the replay streams).
    public func allTransactions() -> [[Patch]] {
        var reader = transactionReader()
        var out: [[Patch]] = []
        out.reserveCapacity(transactions)
        while reader.hasNext {
            var patches: [Patch] = []
            reader.readTransaction { patches.append(Patch(position: $0, deleteCount: $1, insert: $2)) }
            out.append(patches)
        }
        return out
    }

    /// Concurrent traces: the transactions `t` was made on top of.
    public func parents(of t: Int) -> [Int] {
        guard !parentStart.isEmpty else { return [] }
        return parentList[Int(parentStart[t])..<Int(parentStart[t + 1])].map { Int($0) }
    }

    /// Concurrent traces: the agent that made transaction `t`.
    public func agent(of t: Int) -> Int { agents.isEmpty ? 0 : Int(agents[t]) }

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a `.json` or `.json.gz` trace.
    public static func load(path: String) throws -> EditingTrace {
        var name = String(path.split(separator: "/").last ?? "")
        for suffix in [".json.gz", ".json"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
        guard let file = fopen(path, "rb") else { throw LoadError(description: "cannot read \(path)") }
        let source = try ByteSource(file: file, gzip: path.hasSuffix(".gz"))
        var parser = TraceParser(source: source)
        return try parser.parseTrace(name: name)
    }

    /// `shared/traces` beside the repository (CI clones next to `shared/`).
    public static func sharedDirectory(from file: String = #filePath) -> String {
        var url = URL(fileURLWithPath: file)
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("shared/traces").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        return "../shared/traces"
    }
}

/// Bytes from a file, inflated on the fly when gzipped.
final class ByteSource {
    private let file: UnsafeMutablePointer<FILE>
    private let gzip: Bool
    private var stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let inBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 16)
    private(set) var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private(set) var count = 0
    var index = 0
    private var finished = false

    init(file: UnsafeMutablePointer<FILE>, gzip: Bool) throws {
        self.file = file
        self.gzip = gzip
        stream.initialize(to: z_stream())
        if gzip {
            guard inflateInit2_(stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw EditingTrace.LoadError(description: "zlib init failed")
            }
        }
    }

    deinit {
        if gzip { inflateEnd(stream) }
        stream.deallocate()
        inBuf.deallocate()
        fclose(file)
    }

    /// Refills `buffer`; returns false at the end of input.
    func refill() throws -> Bool {
        index = 0
        count = 0
        if finished { return false }
        if !gzip {
            count = buffer.withUnsafeMutableBufferPointer { fread($0.baseAddress!, 1, $0.count, file) }
            if count <= 0 { finished = true; count = 0 }
            return count > 0
        }
        while count == 0 {
            if stream.pointee.avail_in == 0 {
                let n = fread(inBuf, 1, 1 << 16, file)
                if n == 0 && ferror(file) != 0 { throw EditingTrace.LoadError(description: "read error") }
                stream.pointee.next_in = inBuf
                stream.pointee.avail_in = uInt(n)
            }
            let status: Int32 = buffer.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                return inflate(stream, Z_NO_FLUSH)
            }
            count = buffer.count - Int(stream.pointee.avail_out)
            if status == Z_STREAM_END {
                finished = true
                return count > 0
            }
            if status != Z_OK && !(status == Z_BUF_ERROR && count > 0) {
                throw EditingTrace.LoadError(description: "gzip data is corrupt")
            }
        }
        return true
    }
}

/// A small pull parser for the trace JSON.
struct TraceParser {
    let source: ByteSource

    struct Failure: Error {}

    mutating func peek() throws -> UInt8 {
        if source.index >= source.count {
            guard try source.refill() else { throw EditingTrace.LoadError(description: "unexpected end of trace") }
        }
        return source.buffer[source.index]
    }

    mutating func next() throws -> UInt8 {
        let b = try peek()
        source.index += 1
        return b
    }

    mutating func skipSpace() throws {
        while true {
            let b = try peek()
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { source.index += 1 } else { return }
        }
    }

    mutating func expect(_ c: UInt8) throws {
        try skipSpace()
        guard try next() == c else { throw EditingTrace.LoadError(description: "malformed trace JSON") }
    }

    /// True and consumes `c` if it is next (after space).
    mutating func take(_ c: UInt8) throws -> Bool {
        try skipSpace()
        if try peek() == c {
            source.index += 1
            return true
        }
        return false
    }

    mutating func string() throws -> String {
        var out: [UInt8] = []
        try appendString(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends a JSON string's UTF-8 (escapes resolved) to `out`.
    mutating func appendString(to out: inout [UInt8]) throws {
        try expect(0x22)
        while true {
            let b = try next()
            if b == 0x22 { break }
            if b != 0x5C {
                out.append(b)
                continue
            }
            let e = try next()
            switch e {
            case 0x22, 0x5C, 0x2F: out.append(e)
            case 0x62: out.append(8)
            case 0x66: out.append(12)
            case 0x6E: out.append(10)
            case 0x72: out.append(13)
            case 0x74: out.append(9)
            case 0x75:
                var v = try hex4()
                if (0xD800..<0xDC00).contains(v) {
                    guard try next() == 0x5C, try next() == 0x75 else { throw EditingTrace.LoadError(description: "bad surrogate") }
                    let lo = try hex4()
                    v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
                }
                guard let s = Unicode.Scalar(v) else { throw EditingTrace.LoadError(description: "bad escape") }
                out.append(contentsOf: Array(String(Character(s)).utf8))
            default: throw EditingTrace.LoadError(description: "bad escape")
            }
        }
    }

    mutating func hex4() throws -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = try next()
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 97...102: d = UInt32(c - 87)
            case 65...70: d = UInt32(c - 55)
            default: throw EditingTrace.LoadError(description: "bad hex")
            }
            v = v << 4 | d
        }
        return v
    }

    mutating func int() throws -> Int {
        try skipSpace()
        var neg = false
        if try peek() == 0x2D {
            neg = true
            source.index += 1
        }
        var v = 0
        var digits = 0
        while true {
            let b = try peek()
            guard b >= 48 && b <= 57 else { break }
            v = v * 10 + Int(b - 48)
            digits += 1
            source.index += 1
        }
        guard digits > 0 else { throw EditingTrace.LoadError(description: "expected a number") }
        return neg ? -v : v
    }

    mutating func skipValue() throws {
        try skipSpace()
        switch try peek() {
        case 0x22: _ = try string()
        case 0x7B:
            source.index += 1
            if try take(0x7D) { return }
            repeat {
                _ = try string()
                try expect(0x3A)
                try skipValue()
            } while try take(0x2C)
            try expect(0x7D)
        case 0x5B:
            source.index += 1
            if try take(0x5D) { return }
            repeat { try skipValue() } while try take(0x2C)
            try expect(0x5D)
        default:
            // number, true, false, null
            while true {
                let b = try peek()
                if b == 0x2C || b == 0x7D || b == 0x5D || b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { return }
                source.index += 1
            }
        }
    }

    /// Iterates `[ ... ]`, calling `body` before each element.
    mutating func array(_ body: (inout TraceParser) throws -> Void) throws {
        try expect(0x5B)
        if try take(0x5D) { return }
        repeat { try body(&self) } while try take(0x2C)
        try expect(0x5D)
    }

    /// Iterates `{ ... }`, calling `body` with each key.
    mutating func object(_ body: (inout TraceParser, String) throws -> Void) throws {
        try expect(0x7B)
        if try take(0x7D) { return }
        repeat {
            let key = try string()
            try expect(0x3A)
            try body(&self, key)
        } while try take(0x2C)
        try expect(0x7D)
    }

    mutating func parseTrace(name: String) throws -> EditingTrace {
        var t = EditingTrace(name: name, isConcurrent: false, agentCount: 1, endContent: "")
        var writer = PatchStream.Writer()
        var scratch: [UInt8] = []
        try object { p, key in
            switch key {
            case "endContent": t.endContent = try p.string()
            case "kind": t.isConcurrent = try p.string() == "concurrent"
            case "numAgents": t.agentCount = try p.int()
            case "txns":
                try p.array { p in
                    var sawAgent = false
                    var patchesInTransaction = 0
                    try p.object { p, k in
                        switch k {
                        case "patches":
                            try p.array { p in
                                try p.expect(0x5B)
                                let position = try p.int()
                                try p.expect(0x2C)
                                let deleteCount = try p.int()
                                try p.expect(0x2C)
                                scratch.removeAll(keepingCapacity: true)
                                try p.appendString(to: &scratch)
                                try p.expect(0x5D)
                                guard position >= 0, deleteCount >= 0 else {
                                    throw EditingTrace.LoadError(description: "negative position or delete count")
                                }
                                writer.append(position: position, deleteCount: deleteCount, insert: scratch, to: &t.patchData)
                                t.patchCount += 1
                                patchesInTransaction += 1
                            }
                        case "parents":
                            try p.array { p in t.parentList.append(Int32(try p.int())) }
                        case "agent":
                            t.agents.append(Int32(try p.int()))
                            sawAgent = true
                        default:
                            try p.skipValue()
                        }
                    }
                    if !sawAgent && t.isConcurrent { t.agents.append(0) }
                    // Both per-transaction tables are started only when a transaction needs
                    // them (the earlier ones padded), so sequential traces never build them.
                    if patchesInTransaction != 1 || !t.transactionSizes.isEmpty {
                        if t.transactionSizes.isEmpty {
                            t.transactionSizes = [UInt8](repeating: 1, count: t.transactions)
                        }
                        LEB128.appendUnsigned(UInt64(patchesInTransaction), to: &t.transactionSizes)
                    }
                    t.transactions += 1
                    if !t.parentList.isEmpty {
                        while t.parentStart.count < t.transactions { t.parentStart.append(0) }
                        t.parentStart.append(Int32(t.parentList.count))
                    }
                }
            default:
                try p.skipValue()
            }
        }
        if !t.isConcurrent { t.agents = [] }
        if t.parentList.isEmpty {
            t.parentStart = []
        } else {
            while t.parentStart.count <= t.transactions { t.parentStart.append(Int32(t.parentList.count)) }
        }
        return t
    }
}
