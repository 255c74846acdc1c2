import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// How Imprint's XRPC clients (`DeliveryClient`, `ImprintZones`' `HTTPZoneStore`) answer a
/// 429 `RateLimited`: wait as long as the answer's `Retry-After` says, then send the request
/// again, a few times, before handing the 429 to the caller.
///
/// `imprint-server` limits each DID's requests (100 a second after a burst of 500 by
/// default) and refuses the excess at its gate, before it does anything, so sending again is
/// safe for every method. A client that pushes hundreds of edits in a row meets the limit as
/// a short wait rather than a failed push. Another 429, `TooManyKeyPackages`, is no rate limit
/// (waiting does not change it) and is handed over at once.
///
/// ```swift
/// let response = try await RateLimitBackoff.execute(client, timeout: .seconds(30), retries: 3) {
///     try builder.request(path: path, query: [], method: .GET, lxm: nsid)  // a fresh token each time
/// }
/// ```
package enum RateLimitBackoff {
    /// The longest wait for one `Retry-After` (a larger value, or an HTTP date, waits this long).
    package static let maximumWait: Duration = .seconds(10)
    /// The wait when a 429 `RateLimited` has no usable `Retry-After`.
    package static let defaultWait: Duration = .seconds(1)

    /// Sends the request `makeRequest` builds (a new one for every attempt, so each carries a
    /// fresh service-auth token: the server refuses a token it has seen) and returns the first
    /// answer that is not a 429 `RateLimited`, or the last one after `retries` waits. A 429
    /// whose body names another error comes back at once, its body read into the response.
    package static func execute(
        _ client: HTTPClient, timeout: TimeAmount, retries: Int, _ makeRequest: () throws -> HTTPClientRequest
    ) async throws -> HTTPClientResponse {
        var attempt = 0
        while true {
            let response = try await client.execute(try makeRequest(), timeout: timeout)
            guard response.status == .tooManyRequests else { return response }
            let body = try await response.body.collect(upTo: XRPCErrorBody.maximumBytes)
            let name = (try? JSONDecoder().decode(XRPCErrorBody.self, from: body))?.error
            guard name == "RateLimited", attempt < retries else {
                return HTTPClientResponse(version: response.version, status: response.status, headers: response.headers, body: .bytes(body))
            }
            attempt += 1
            try await Task.sleep(for: wait(retryAfter: response.headers.first(name: "Retry-After")))
        }
    }

    /// The wait a `Retry-After` value asks for: delay-seconds, at most `maximumWait`;
    /// `defaultWait` when absent or not a number.
    package static func wait(retryAfter value: String?) -> Duration {
        guard let value, let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return defaultWait }
        return min(.seconds(seconds), maximumWait)
    }
}
