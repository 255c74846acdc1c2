import AsyncHTTPClient
import Foundation
import NIOHTTP1

/// Builds signed XRPC requests: `<baseURL><path>?<percent-encoded query>` with a fresh
/// service-auth JWT (`aud` = the service DID, `lxm` = the method NSID) per request.
///
/// The one request builder of every XRPC client in the package: `DeliveryClient` for the
/// Delivery Service and `ImprintZones`' `HTTPZoneStore` for the zone service.
package struct XRPCRequestBuilder: Sendable {
    package let baseURL: String
    package let serviceDID: String
    package let signer: ServiceAuthSigner

    /// - Parameter baseURL: e.g. `http://127.0.0.1:8080`; a trailing slash is dropped.
    package init(baseURL: String, serviceDID: String, signer: ServiceAuthSigner) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.serviceDID = serviceDID
        self.signer = signer
    }

    /// A request for `path`, signed for `lxm` when given (nil: unauthenticated, e.g. health).
    package func request(path: String, query: [(String, String)], method: HTTPMethod, lxm: String?) throws -> HTTPClientRequest {
        var url = baseURL + path
        if !query.isEmpty {
            url += "?" + query.map { "\(Self.percentEncode($0.0))=\(Self.percentEncode($0.1))" }.joined(separator: "&")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let lxm {
            request.headers.add(name: "Authorization", value: "Bearer " + (try signer.token(audience: serviceDID, method: lxm)))
        }
        return request
    }

    static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.alphanumerics
        set.insert(charactersIn: "-._~:")
        return set
    }()

    package static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: queryValueAllowed) ?? text
    }
}
