import Foundation

/// Where the bytes and the load time of a saved document go; for tuning the format.
@_spi(Benchmarks)
public struct FormatStatistics: Sendable {
    public var compressedBytes = 0
    public var payloadBytes = 0
    public var spanCount = 0
    public var sectionBytes: [String: Int] = [:]
    public var unframeMs = 0.0
    public var decodeMs = 0.0
    public var textMs = 0.0

    public static func measure(_ bytes: [UInt8]) throws -> FormatStatistics {
        var s = FormatStatistics()
        s.compressedBytes = bytes.count
        let t0 = DispatchTime.now().uptimeNanoseconds
        let payload = try DocumentFormat.unframe(bytes)
        let t1 = DispatchTime.now().uptimeNanoseconds
        let doc = Document()
        try doc.decodePayload(payload, version: bytes[4])
        let t2 = DispatchTime.now().uptimeNanoseconds
        for (_, st) in doc.objects {
            if case .sequence(let q) = st {
                _ = q.text()
                q.forEachSpan { _ in s.spanCount += 1 }
            }
        }
        let t3 = DispatchTime.now().uptimeNanoseconds
        s.unframeMs = Double(t1 - t0) / 1e6
        s.decodeMs = Double(t2 - t1) / 1e6
        s.textMs = Double(t3 - t2) / 1e6
        s.payloadBytes = payload.count
        // Column sizes, raw and compressed on their own.
        _ = doc.encodePayload { name, bytes in
            s.sectionBytes[name + ".raw", default: 0] += bytes.count
            s.sectionBytes[name + ".zstd", default: 0] += Zstd.compress(bytes).count
        }
        return s
    }
}
