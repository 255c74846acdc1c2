import AsyncHTTPClient
import Foundation
import ImprintDelivery
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A response read whole, for hostile-input and auth tests that bypass `DeliveryClient`.
public struct RawResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data

    public var errorBody: XRPCErrorBody? { try? JSONDecoder().decode(XRPCErrorBody.self, from: body) }
    public var errorName: String? { errorBody?.error }
    public var text: String { String(decoding: body, as: UTF8.self) }
}

public enum RawHTTP {
    public static func send(
        _ server: RunningServer, _ method: HTTPMethod, _ pathAndQuery: String, headers: [(String, String)] = [],
        body: Data? = nil
    ) async throws -> RawResponse {
        try await send(baseURL: server.baseURL, method, pathAndQuery, headers: headers, body: body)
    }

    /// `send` to a server known by its URL only (a child process).
    public static func send(
        baseURL: String, _ method: HTTPMethod, _ pathAndQuery: String, headers: [(String, String)] = [], body: Data? = nil
    ) async throws -> RawResponse {
        var request = HTTPClientRequest(url: baseURL + pathAndQuery)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await TestHTTP.client.execute(request, timeout: TestHTTP.requestTimeout)
        let bytes = try await response.body.collect(upTo: 32 << 20)
        return RawResponse(status: Int(response.status.code), headers: response.headers, body: Data(buffer: bytes))
    }

    /// A call of `method` signed by `signer` with a fresh valid token.
    public static func call(
        _ server: RunningServer, _ method: DeliveryMethod, signer: ServiceAuthSigner, query: String = "", body: Data? = nil,
        extraHeaders: [(String, String)] = []
    ) async throws -> RawResponse {
        let token = try signer.token(audience: RunningServer.serviceDID, method: method.nsid)
        return try await send(
            server, method.isProcedure ? .POST : .GET, method.path + (query.isEmpty ? "" : "?" + query),
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")] + extraHeaders, body: body)
    }
}

extension Data {
    public init(json: String) { self.init(json.utf8) }
}

/// A lowercase hex SHA-256-shaped string for message metadata.
public func fakeHash(_ n: Int) -> String {
    let hex = String(n, radix: 16)
    return String(repeating: "0", count: 64 - hex.count) + hex
}

extension RawHTTP {
    /// The value of one series in `baseURL`'s `/metrics` (`series`: the text before the value,
    /// name and labels, e.g. `imprint_rejections_total{error="RateLimited"}`), or nil when the
    /// server has not counted it yet.
    public static func metric(baseURL: String, _ series: String) async throws -> Double? {
        let text = try await send(baseURL: baseURL, .GET, "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    public static func metric(_ server: RunningServer, _ series: String) async throws -> Double? {
        try await metric(baseURL: server.baseURL, series)
    }
}
