import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore
import NIOFoundationCompat

/// Reads a bounded JSON body and decodes it, turning every failure into a 400 or 413.
package enum RequestBodyReader {
    package static func decode<Input: Decodable>(_ type: Input.Type, from request: Request, limit: Int) async throws -> Input {
        try decode(type, from: try await collect(request, limit: limit))
    }

    /// Like `decode`, but first tries `plain` (a decoder for the common, simple form of the
    /// input that returns nil for anything else); `JSONDecoder` reads what it refuses.
    static func decode<Input: Decodable>(
        _ type: Input.Type, from request: Request, limit: Int, plain: (UnsafeRawBufferPointer) -> Input?
    ) async throws -> Input {
        let buffer = try await collect(request, limit: limit)
        if let input = buffer.withUnsafeReadableBytes(plain) { return input }
        return try decode(type, from: buffer)
    }

    /// Bytes past a body's limit that are still read (and dropped) before the 413 goes out.
    /// Closing a connection with request bytes unread makes the kernel reset it, and a client
    /// still sending its body may then lose the answer; a moderately oversized body is read
    /// to its end instead, so the 413 arrives. Beyond this the connection is simply closed.
    static let drainLimit = 1 << 20

    /// The whole body, at most `limit` bytes, not empty and declared `application/json`.
    private static func collect(_ request: Request, limit: Int) async throws -> ByteBuffer {
        guard isJSON(request.headers[.contentType]) else { throw DeliveryError.unsupportedMediaType(request.headers[.contentType]) }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit + drainLimit {
            throw DeliveryError.payloadTooLarge(limit: limit)
        }
        var buffer = ByteBuffer()
        var size = 0
        for try await chunk in request.body {
            size += chunk.readableBytes
            if size > limit + drainLimit { break }
            if size <= limit { buffer.writeImmutableBuffer(chunk) }
        }
        guard size <= limit else { throw DeliveryError.payloadTooLarge(limit: limit) }
        guard buffer.readableBytes > 0 else { throw DeliveryError.invalidRequest("empty body; expected a JSON object") }
        return buffer
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`), in any case.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return media == "application/json"
    }

    /// `JSONDecoder`, after refusing a key repeated in one object (the decoder would keep one
    /// of them silently; two readers of one body must never see different values). The plain
    /// fast path needs no such scan: `FlatJSONReader` refuses repeated keys itself.
    private static func decode<Input: Decodable>(_ type: Input.Type, from buffer: ByteBuffer) throws -> Input {
        if let key = buffer.withUnsafeReadableBytes({ JSONDuplicateKey.first(in: $0) }) {
            throw DeliveryError.invalidRequest("the key \"\(QueryParameters.printable(key))\" appears twice in one object")
        }
        do {
            return try WireJSON.decoder().decode(Input.self, from: buffer)
        } catch let error as DecodingError {
            throw DeliveryError.invalidRequest(describe(error))
        } catch {
            throw DeliveryError.invalidRequest("malformed JSON")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "body" : QueryParameters.printable(text)
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \(path(context.codingPath + [key]))"
        case .typeMismatch(_, let context): return "wrong type for \(path(context.codingPath))"
        case .valueNotFound(_, let context): return "null for \(path(context.codingPath))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "malformed JSON" }
            return "invalid value for \(path(context.codingPath))"
        @unknown default: return "invalid body"
        }
    }
}
