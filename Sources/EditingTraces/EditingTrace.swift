import CZlib
import Foundation

/// An editing trace from `shared/traces` (the josephg/editing-traces format): a list of
/// transactions of `[position, deleteCount, insertText]` patches, positions in code points.
public struct EditingTrace: Sendable {
    public struct Patch: Sendable {
        public var position: Int
        public var deleteCount: Int
        public var insert: String
    }

    public struct Transaction: Sendable {
        public var patches: [Patch]
        /// Concurrent traces: indices of the transactions this one was made on top of.
        public var parents: [Int]
        /// Concurrent traces: which agent made it.
        public var agent: Int
    }

    public var name: String
    public var isConcurrent: Bool
    public var agentCount: Int
    public var endContent: String
    public var transactions: [Transaction]

    public var patchCount: Int { transactions.reduce(0) { $0 + $1.patches.count } }

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a `.json` or `.json.gz` trace.
    public static func load(path: String) throws -> EditingTrace {
        guard let raw = FileManager.default.contents(atPath: path) else {
            throw LoadError(description: "cannot read \(path)")
        }
        let json = path.hasSuffix(".gz") ? try gunzip([UInt8](raw)) : [UInt8](raw)
        guard let root = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
            let end = root["endContent"] as? String, let txns = root["txns"] as? [[String: Any]]
        else { throw LoadError(description: "\(path) is not an editing trace") }
        var out: [Transaction] = []
        out.reserveCapacity(txns.count)
        for t in txns {
            guard let ps = t["patches"] as? [[Any]] else { throw LoadError(description: "bad patches") }
            var patches: [Patch] = []
            for p in ps {
                guard p.count == 3, let pos = (p[0] as? NSNumber)?.intValue, let del = (p[1] as? NSNumber)?.intValue,
                    let ins = p[2] as? String
                else { throw LoadError(description: "bad patch") }
                patches.append(Patch(position: pos, deleteCount: del, insert: ins))
            }
            let parents = (t["parents"] as? [NSNumber])?.map(\.intValue) ?? []
            let agent = (t["agent"] as? NSNumber)?.intValue ?? 0
            out.append(Transaction(patches: patches, parents: parents, agent: agent))
        }
        let name = URL(fileURLWithPath: path).lastPathComponent.replacingOccurrences(of: ".json.gz", with: "")
            .replacingOccurrences(of: ".json", with: "")
        return EditingTrace(
            name: name, isConcurrent: (root["kind"] as? String) == "concurrent",
            agentCount: (root["numAgents"] as? NSNumber)?.intValue ?? 1, endContent: end, transactions: out)
    }

    static func gunzip(_ input: [UInt8]) throws -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard inflateInit2_(stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw LoadError(description: "zlib init failed")
        }
        defer { inflateEnd(stream) }
        let inBuf = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, input.count))
        defer { inBuf.deallocate() }
        inBuf.initialize(from: input, count: input.count)
        let chunkSize = 1 << 16
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        stream.pointee.next_in = inBuf
        stream.pointee.avail_in = uInt(input.count)
        var out = [UInt8]()
        var status: Int32 = Z_OK
        while status == Z_OK {
            stream.pointee.next_out = chunk
            stream.pointee.avail_out = uInt(chunkSize)
            status = inflate(stream, Z_NO_FLUSH)
            let produced = chunkSize - Int(stream.pointee.avail_out)
            out.append(contentsOf: UnsafeBufferPointer(start: chunk, count: produced))
            if status == Z_BUF_ERROR && produced > 0 { status = Z_OK }
        }
        guard status == Z_STREAM_END else { throw LoadError(description: "gzip data is corrupt") }
        return out
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
