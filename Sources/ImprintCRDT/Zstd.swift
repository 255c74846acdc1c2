import CZstd
import Foundation

/// zstd compression with bounded, streaming decompression.
enum Zstd {
    /// Compresses one buffer. At the fast levels (up to ``pooledLevels``), which compress
    /// change sets as they are typed, a context is taken from a small pool and put back:
    /// creating one cost more than compressing a typed word (about 50 µs against a few). Other
    /// levels use a context of their own (see `Encoder`).
    static func compress(_ input: [UInt8], level: Int32 = 19) -> [UInt8] {
        guard pooledLevels.contains(level) else { return Encoder(level: level).compress(input) }
        let encoder = encoders.take(level) { Encoder(level: level) }
        defer { encoders.put(encoder, key: level, handledBytes: input.count) }
        return encoder.compress(input)
    }

    /// The levels whose contexts are pooled.
    static let pooledLevels: ClosedRange<Int32> = 1...3
    static let encoders = ContextPool<Encoder>()
    static let decoders = ContextPool<Decoder>()

    /// Contexts kept for reuse, at most ``keptPerKey`` per key (a compression level), each
    /// taken by one caller at a time. A context that worked on a large input is not put back
    /// (its tables and buffers grew with it), so what stays allocated is bounded.
    final class ContextPool<Context>: @unchecked Sendable {
        static var keptPerKey: Int { 2 }
        /// Contexts that handled more bytes than this are not kept.
        static var largestKeptInput: Int { 64 << 10 }

        private let lock = NSLock()
        private var idle: [Int32: [Context]] = [:]

        /// An idle context for `key`, or a new one from `make`.
        func take(_ key: Int32, make: () throws -> Context) rethrows -> Context {
            lock.lock()
            let context = idle[key]?.popLast()
            lock.unlock()
            return try context ?? make()
        }

        /// Keeps `context` for the next caller, if it handled at most ``largestKeptInput``
        /// bytes and fewer than ``keptPerKey`` are idle.
        func put(_ context: Context, key: Int32, handledBytes: Int) {
            guard handledBytes <= Self.largestKeptInput else { return }
            lock.lock()
            defer { lock.unlock() }
            if idle[key, default: []].count < Self.keptPerKey { idle[key, default: []].append(context) }
        }
    }

    /// A reusable compression context: one per save, shared by every column.
    ///
    /// Level 19 with the match tables capped (hash log 16, chain log 17): on text-sized
    /// inputs that costs ~1% of size and saves ~3 MB of compressor memory. Reusing the
    /// context keeps its tables allocated once instead of once per column, and output goes
    /// through one scratch buffer, so a column's result costs only its compressed size.
    final class Encoder {
        private let ctx: OpaquePointer
        private var scratch: UnsafeMutableRawBufferPointer

        init(level: Int32 = 19) {
            guard let c = ZSTD_createCCtx() else { preconditionFailure("zstd cannot allocate a context") }
            ctx = c
            ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level)
            ZSTD_CCtx_setParameter(ctx, ZSTD_c_hashLog, 16)
            ZSTD_CCtx_setParameter(ctx, ZSTD_c_chainLog, 17)
            scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }

        deinit {
            ZSTD_freeCCtx(ctx)
            scratch.deallocate()
        }

        /// Compresses `input` into one zstd frame.
        func compress(_ input: [UInt8]) -> [UInt8] {
            let bound = ZSTD_compressBound(input.count)
            if scratch.count < bound {
                scratch.deallocate()
                // Untouched capacity is never resident: only what zstd writes costs memory.
                scratch = .allocate(byteCount: bound, alignment: 16)
            }
            let n = input.withUnsafeBytes { src in
                ZSTD_compress2(ctx, scratch.baseAddress, bound, src.baseAddress, input.count)
            }
            precondition(ZSTD_isError(n) == 0, "zstd compression cannot fail with a sufficient buffer")
            return Array(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
        }
    }

    /// A reusable decompression context (creating one per column is measurable at load).
    final class Decoder {
        let ctx: OpaquePointer

        init() throws {
            guard let c = ZSTD_createDCtx() else { throw CRDTError(.compression, "cannot create zstd context") }
            ctx = c
        }

        deinit { ZSTD_freeDCtx(ctx) }

        /// Decompresses one frame of `expected` bytes. Output is allocated up front only when
        /// the claimed ratio is plausible; otherwise it grows with what actually comes out, so
        /// a hostile header cannot make the decoder allocate memory the data does not fill.
        func decompress(_ input: ArraySlice<UInt8>, expected: Int, limit: Int) throws -> [UInt8] {
            guard expected <= limit else { throw CRDTError(.tooLarge, "declared size \(expected) exceeds limit \(limit)") }
            guard expected <= input.count &* 64 &+ 65536 else {
                return try Zstd.decompressStreaming(input, expected: expected, ctx: ctx)
            }
            var failure: Int?
            let out = try [UInt8](unsafeUninitializedCapacity: expected) { buf, count in
                let r = input.withUnsafeBytes { src in
                    ZSTD_decompressDCtx(ctx, buf.baseAddress, expected, src.baseAddress, src.count)
                }
                if ZSTD_isError(r) != 0 {
                    failure = r
                    count = 0
                    return
                }
                guard r == expected else { throw CRDTError(.malformed, "section size differs from declared") }
                count = r
            }
            if let failure { throw CRDTError(.compression, String(cString: ZSTD_getErrorName(failure))) }
            return out
        }
    }

    /// Decompresses one frame. Small frames (a change set as it is typed) use a pooled
    /// context, larger ones a context of their own (see `Decoder`).
    static func decompress(_ input: ArraySlice<UInt8>, expected: Int, limit: Int) throws -> [UInt8] {
        // Only one-shot frames (an output this small always is): a streamed frame grows the
        // context's window buffer, which must not stay allocated in the pool.
        let largest = ContextPool<Decoder>.largestKeptInput
        guard input.count <= largest, expected <= largest else { return try Decoder().decompress(input, expected: expected, limit: limit) }
        let decoder = try decoders.take(0) { try Decoder() }
        defer { decoders.put(decoder, key: 0, handledBytes: max(input.count, expected)) }
        return try decoder.decompress(input, expected: expected, limit: limit)
    }

    static func decompressStreaming(_ input: ArraySlice<UInt8>, expected: Int, ctx: OpaquePointer) throws -> [UInt8] {
        ZSTD_DCtx_reset(ctx, ZSTD_reset_session_only)
        var out: [UInt8] = []
        out.reserveCapacity(min(expected, 1 << 24))
        var chunk = [UInt8](repeating: 0, count: 1 << 17)
        let src = Array(input)
        var done = false
        try src.withUnsafeBytes { s in
            var inBuf = ZSTD_inBuffer(src: s.baseAddress, size: s.count, pos: 0)
            while true {
                var produced = 0
                let r = chunk.withUnsafeMutableBytes { c -> Int in
                    var outBuf = ZSTD_outBuffer(dst: c.baseAddress, size: c.count, pos: 0)
                    let r = ZSTD_decompressStream(ctx, &outBuf, &inBuf)
                    produced = outBuf.pos
                    return r
                }
                if ZSTD_isError(r) != 0 {
                    throw CRDTError(.compression, String(cString: ZSTD_getErrorName(r)))
                }
                if out.count + produced > expected { throw CRDTError(.malformed, "section larger than declared") }
                out.append(contentsOf: chunk[0..<produced])
                if r == 0 { done = true; break }
                if inBuf.pos == inBuf.size && produced == 0 { break }
            }
        }
        guard done else { throw CRDTError(.truncated, "zstd frame is incomplete") }
        guard out.count == expected else { throw CRDTError(.malformed, "section smaller than declared") }
        return out
    }
}
