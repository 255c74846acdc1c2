import Crypto
import Foundation

/// The self-contained viewer page around an envelope: markup, ``ViewerStyle`` and
/// ``ViewerScript`` inline, the envelope as a JSON data block, and a Content-Security-Policy
/// that allows exactly that script and style (by SHA-256) and no network request at all:
/// `default-src 'none'`, images only from `blob:`/`data:` (decrypted assets). The link form
/// adds `connect-src` for its own server and nothing else.
///
/// The document's title is not in the page's plaintext (`<title>` is generic until the
/// viewer decrypts it): the file reveals only its size and the envelope's parameters.
public enum ViewerPage {
    /// `sha256-…` source expressions of the inline script and style.
    public static let scriptHash = "sha256-" + Data(SHA256.hash(data: Array(ViewerScript.js.utf8))).base64EncodedString()
    public static let styleHash = "sha256-" + Data(SHA256.hash(data: Array(ViewerStyle.css.utf8))).base64EncodedString()

    /// The policy for an envelope (its link's server, if any, is the one allowed connection).
    public static func contentSecurityPolicy(for envelope: ReviewEnvelope) -> String {
        var policy = "default-src 'none'; script-src '\(scriptHash)'; style-src '\(styleHash)'; img-src blob: data:; base-uri 'none'; form-action 'none'"
        if let link = envelope.link {
            if link.server.isEmpty { policy += "; connect-src 'self'" } else if let origin = origin(of: link.server) { policy += "; connect-src \(origin)" }
        }
        return policy
    }

    /// `scheme://host[:port]` of an http(s) URL, or nil.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
              host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" || $0 == "[" || $0 == "]" })
        else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }

    /// The envelope as JSON safe inside a `<script type="application/json">` element.
    static func embeddedJSON(_ envelope: ReviewEnvelope) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: (try? encoder.encode(envelope)) ?? Data("null".utf8), as: UTF8.self)
        return json.replacingOccurrences(of: "<", with: "\\u003c").replacingOccurrences(of: ">", with: "\\u003e")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }

    /// The page a server serves at `/review` for every link: it holds no snapshot; the
    /// link's fragment names the snapshot, the record, the comment capability and the key, and
    /// the page fetches the sealed envelope from its own origin (`connect-src 'self'`).
    public static func linkPage() -> String { html(envelope: linkEnvelope) }

    /// The envelope of ``linkPage()``: no snapshot, the page's own origin.
    public static let linkEnvelope = ReviewEnvelope(format: ReviewEnvelope.currentFormat, snapshotId: "", payload: nil, password: nil,
                                                    link: .init(server: "", zoneId: ""))

    public static func html(envelope: ReviewEnvelope) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy(for: envelope))">
        <meta name="referrer" content="no-referrer">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="generator" content="Imprint reviewer snapshot (\(ReviewEnvelope.currentFormat))">
        <title>Review copy</title>
        <style>\(ViewerStyle.css)</style>
        </head>
        <body data-state="loading">
        <section id="unlock" hidden>
        <h1>Encrypted review copy</h1>
        <p>The owner sent you the password separately.</p>
        <form id="unlock-form">
        <label for="password">Password</label>
        <input id="password" type="password" autocomplete="off" required>
        <p><button id="open" type="submit">Open</button></p>
        </form>
        </section>
        <section id="link-entry" hidden>
        <h1>Encrypted review copy</h1>
        <p>Paste the review link the owner sent you. Its last part is the key: this page uses it here and sends it nowhere.</p>
        <form id="link-form">
        <label for="link-text">Review link</label>
        <input id="link-text" type="text" autocomplete="off" spellcheck="false" required>
        <p><button id="link-open" type="submit">Open</button></p>
        </form>
        </section>
        <p id="status" role="status" aria-live="polite"></p>
        <div id="reader" hidden>
        <header class="bar">
        <span class="grow" id="doc-title"></span>
        <button id="comment" type="button" disabled aria-keyshortcuts="Control+Alt+M">Comment on selection</button>
        <button id="download" type="button" class="secondary" disabled>Download comments (<span id="pending-count">0</span> unsent)</button>
        </header>
        <div id="layout">
        <article id="doc"><h1 class="title" id="doc-heading"></h1><div id="doc-body"></div></article>
        <aside id="comments" aria-label="Comments">
        <h2>Comments</h2>
        <form id="comment-form" hidden>
        <strong id="form-title"></strong>
        <label for="comment-author">Your name (optional)</label>
        <input id="comment-author" type="text" maxlength="200" autocomplete="name">
        <label for="comment-text">Comment</label>
        <textarea id="comment-text" rows="4" maxlength="20000" required></textarea>
        <div class="actions"><button id="save" type="submit">Save comment</button><button id="cancel" type="button" class="secondary">Cancel</button></div>
        </form>
        <ol id="comment-list"></ol>
        </aside>
        </div>
        </div>
        <noscript><p>This review copy needs JavaScript to decrypt the document.</p></noscript>
        <script type="application/json" id="imprint-envelope">\(embeddedJSON(envelope))</script>
        <script>\(ViewerScript.js)</script>
        </body>
        </html>

        """
    }
}
