import Foundation
import ImprintEncoding
import ImprintTestSupport
import Testing

/// The repository root, from this file's location.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()

/// A headless browser driving a snapshot page through `Tests/Interop/review_browser.py`:
/// Chromium (Debian's chromium and chromium-driver, selenium from `.venv-peers`) or Firefox
/// (Debian's firefox-esr, marionette-driver from `.venv-peers`); scripts/test.sh installs them
/// all. One run opens one page and plays a list of steps; screenshots go to
/// `.build/test-artifacts/reviewer-snapshots/<name>/`, kept for looking at after the run.
enum ReviewBrowser {
    enum Kind: String, Sendable, CustomStringConvertible {
        case chromium, firefox
        var description: String { rawValue }
        var available: Bool { self == .chromium ? ReviewBrowser.available : ReviewBrowser.firefoxAvailable }
    }

    static let python = repositoryRoot + "/.venv-peers/bin/python"
    static let script = repositoryRoot + "/Tests/Interop/review_browser.py"

    /// Whether the browser can run here; when not, say so loudly (CI never skips: its test
    /// command installs everything).
    static let available: Bool = {
        let missing = [python, "/usr/bin/chromium", "/usr/bin/chromedriver"].filter { !FileManager.default.isExecutableFile(atPath: $0) }
        if missing.isEmpty { return true }
        FileHandle.standardError.write(Data("""

            !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
            !! SKIPPING the browser tests of reviewer snapshots: missing \(missing.joined(separator: ", ")).
            !! Run `bash scripts/test.sh` (it installs chromium, chromium-driver and the venv).
            !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!

            """.utf8))
        return false
    }()

    /// Whether Firefox runs here (it needs Chromium's prerequisites' venv too); loud when not.
    static let firefoxAvailable: Bool = {
        let firefox = ["/usr/bin/firefox-esr", "/usr/bin/firefox"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let marionette = FileManager.default.fileExists(atPath: repositoryRoot + "/.venv-peers/bin/mozrunner")
            || (try? FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/.venv-peers/lib"))?.contains { version in
                FileManager.default.fileExists(atPath: repositoryRoot + "/.venv-peers/lib/\(version)/site-packages/marionette_driver")
            } == true
        if firefox != nil, marionette, available { return true }
        FileHandle.standardError.write(Data("""

            !! SKIPPING the Firefox runs of the reviewer-snapshot viewer: firefox-esr or marionette-driver is missing.
            !! Run `bash scripts/test.sh` (it installs both).

            """.utf8))
        return false
    }()

    static func artifacts(_ name: String) -> String {
        repositoryRoot + "/.build/test-artifacts/reviewer-snapshots/" + name
    }

    /// Plays `steps` on `page` (file:// unless `serve`) or on `url` as it is, returns each
    /// step's result object.
    static func run(page: String? = nil, url: String? = nil, steps: [JSONValue], name: String, serve: Bool = false,
                    browser: Kind = .chromium, downloads: String) async throws -> [JSONValue] {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("review-browser-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try Data(JSONValue.array(steps).serialized.utf8).write(to: URL(fileURLWithPath: work + "/steps.json"))
        var arguments = [script] + (url.map { ["--url", $0] } ?? ["--page", page ?? ""]) + ["--steps", work + "/steps.json", "--out", work + "/out.json",
                         "--shots", artifacts(name), "--downloads", downloads]
        if serve { arguments.append("--serve") }
        arguments += ["--browser", browser.rawValue]
        let run = try await ChildProcess.run(python, arguments)
        let status = run.status, log = run.stdoutText + run.stderrText
        guard status == 0, let out = FileManager.default.contents(atPath: work + "/out.json") else {
            throw BrowserError("review_browser.py exited \(status): \(log.suffix(2000))")
        }
        guard case .object(let result)? = try? JSONDecoder().decode(JSONValue.self, from: out), case .array(let results)? = result["steps"] else {
            throw BrowserError("unreadable result: \(String(decoding: out.prefix(500), as: UTF8.self))")
        }
        if let last = results.last, last["do"]?.stringValue == "error" {
            throw BrowserError("browser step failed: \(last["error"]?.stringValue ?? "?")\n\(log.suffix(2000))")
        }
        return results
    }
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }
    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var arrayValue: [JSONValue] { if case .array(let a) = self { a } else { [] } }
    var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    var numberValue: Double? { if case .number(let n) = self { n } else { nil } }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}
