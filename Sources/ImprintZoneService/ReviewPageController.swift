import HTTPTypes
import Hummingbird
import ImprintServer
import NIOCore

/// The page reviewer links open: `GET /review` serves the viewer the server was configured
/// with (`ZoneServiceConfiguration.reviewPage`, built by `imprint-server` from
/// ImprintSnapshot's `ViewerPage.linkPage()`; this module treats it as opaque text). The page
/// holds no snapshot: the link's fragment, which the browser never sends, names the record and
/// carries the key. Served with its Content-Security-Policy as a header too (adding
/// `frame-ancestors 'none'`, which a meta tag cannot), no referrer, no caching, no sniffing.
struct ReviewPageController: Sendable {
    let page: ReviewViewerPage

    static let path = "/review"

    func add(to routes: RouteCollection<DeliveryRequestContext>) {
        routes.get(RouterPath(Self.path), use: serve)
    }

    @Sendable func serve(_ request: Request, context: DeliveryRequestContext) -> Response {
        context.annotations.route = "review"
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = page.contentSecurityPolicy + "; frame-ancestors 'none'"
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page.html)))
    }
}

/// The reviewer-link viewer page and its policy, as opaque text.
public struct ReviewViewerPage: Sendable, Hashable {
    public var html: String
    public var contentSecurityPolicy: String

    public init(html: String, contentSecurityPolicy: String) {
        self.html = html
        self.contentSecurityPolicy = contentSecurityPolicy
    }
}
