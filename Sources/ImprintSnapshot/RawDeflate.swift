import CZlib

/// Raw DEFLATE (RFC 1951, no zlib or gzip header): the `deflate-raw` format that browsers'
/// `DecompressionStream` reads, used for snapshot payloads because browsers have no zstd.
///
/// ```swift
/// let packed = try RawDeflate.compress(Array(json.utf8))
/// let back = try RawDeflate.decompress(packed, limit: 64 << 20)
/// ```
enum RawDeflate {
    /// Compresses `input` at zlib's level 9 (snapshots are written once, read often).
    static func compress(_ input: [UInt8]) throws(ReviewSnapshotError) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ReviewSnapshotError(.compression, "deflateInit2 failed")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = inBuf.baseAddress
                stream.avail_in = uInt(inBuf.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = uInt(outBuf.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw ReviewSnapshotError(.compression, "deflate returned \(status)") }
        output.removeLast(output.count - Int(stream.total_out))
        return output
    }

    /// Decompresses raw DEFLATE, refusing (`.tooLarge`) to produce more than `limit` bytes and
    /// (`.compression`) damaged or truncated streams and trailing bytes.
    static func decompress(_ input: [UInt8], limit: Int) throws(ReviewSnapshotError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ReviewSnapshotError(.compression, "inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = input
        var status: Int32 = Z_OK
        try input.withUnsafeMutableBufferPointer { (inBuf: inout UnsafeMutableBufferPointer<UInt8>) throws(ReviewSnapshotError) in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = uInt(inBuf.count)
            while status != Z_STREAM_END {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { outBuf in
                    stream.next_out = outBuf.baseAddress
                    stream.avail_out = uInt(outBuf.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return outBuf.count - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END else {
                    throw ReviewSnapshotError(.compression, status == Z_BUF_ERROR ? "truncated deflate stream" : "damaged deflate stream (\(status))")
                }
                guard output.count + produced <= limit else { throw ReviewSnapshotError(.tooLarge, "expands past \(limit) bytes") }
                output.append(contentsOf: chunk[0..<produced])
            }
            guard stream.avail_in == 0 else { throw ReviewSnapshotError(.compression, "bytes after the deflate stream") }
        }
        return output
    }
}
