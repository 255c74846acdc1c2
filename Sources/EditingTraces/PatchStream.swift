import ImprintEncoding

/// The compact patch encoding of ``EditingTrace`` (format in its documentation).
enum PatchStream {
    /// Reads a ULEB128 at `offset`. The stream was written by `Writer` in this process, so
    /// a malformed number is a programming error, not hostile input.
    @inline(__always)
    static func readULEB(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: inout Int) -> UInt64 {
        do {
            return try LEB128.readUnsigned(bytes, at: &offset, end: bytes.count)
        } catch {
            preconditionFailure("patch stream written by Writer is malformed: \(error)")
        }
    }

    /// Code points in well-formed UTF-8.
    static func scalarCount<Bytes: Sequence<UInt8>>(_ utf8: Bytes) -> Int {
        var n = 0
        for b in utf8 where b & 0xC0 != 0x80 { n += 1 }
        return n
    }

    /// Appends patches, predicting each position from where the last insert ended.
    struct Writer {
        private var predicted = 0

        mutating func append(position: Int, deleteCount: Int, insert: [UInt8], to out: inout [UInt8]) {
            let delta = Int64(position - predicted)
            LEB128.appendSigned(delta, to: &out)
            LEB128.appendUnsigned(UInt64(deleteCount), to: &out)
            LEB128.appendUnsigned(UInt64(insert.count), to: &out)
            out.append(contentsOf: insert)
            predicted = position + scalarCount(insert)
        }
    }
}

/// Reads an ``EditingTrace``'s transactions in order.
///
/// ```swift
/// var reader = trace.transactionReader()
/// while reader.hasNext {
///     try doc.change { tx in
///         try reader.readTransaction { position, deleteCount, insert in … }
///     }
/// }
/// ```
public struct TransactionReader {
    private let trace: EditingTrace
    private var offset = 0
    private var sizeOffset = 0
    private var predicted = 0
    /// The index of the transaction `readTransaction` reads next.
    public private(set) var transactionIndex = 0

    init(trace: EditingTrace) { self.trace = trace }

    public var hasNext: Bool { transactionIndex < trace.transactionCount }

    /// Calls `body(position, deleteCount, insert)` for each patch of the next transaction.
    public mutating func readTransaction(_ body: (Int, Int, String) throws -> Void) rethrows {
        precondition(hasNext, "no transaction left")
        var count = 1
        if !trace.transactionSizes.isEmpty {
            count = trace.transactionSizes.withUnsafeBufferPointer { Int(PatchStream.readULEB($0, &sizeOffset)) }
        }
        transactionIndex += 1
        for _ in 0..<count {
            let (position, deleteCount, insert) = trace.patchData.withUnsafeBufferPointer { buf -> (Int, Int, String) in
                let z = PatchStream.readULEB(buf, &offset)
                let position = predicted + Int(LEB128.zigzagDecode(z))
                let deleteCount = Int(PatchStream.readULEB(buf, &offset))
                let length = Int(PatchStream.readULEB(buf, &offset))
                let bytes = UnsafeBufferPointer(rebasing: buf[offset..<offset + length])
                offset += length
                predicted = position + PatchStream.scalarCount(bytes)
                let insert = String(decoding: bytes, as: UTF8.self)
                return (position, deleteCount, insert)
            }
            try body(position, deleteCount, insert)
        }
    }
}
