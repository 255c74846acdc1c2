import Foundation
import ImprintEncoding

/// What `imprint demo` shows and proves, step by step: narration lines as it goes (stdout,
/// unless `--json`), one checked claim per step with its time, a summary table at the end, and
/// with `--json` one object `{"steps": [{"name", "ok", "ms", "detail"}], "ok"}` and nothing
/// else on stdout. A claim that does not hold ends the demo with that step marked failed.
final class DemoReport: @unchecked Sendable {
    struct Step {
        var name: String
        var ok: Bool
        var ms: Double
        var detail: String
    }

    /// A claim that did not hold.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let json: Bool
    /// Guards `steps` and `stepStarted`: the co-editing part reports from async code.
    private let lock = NSLock()
    private var recorded: [Step] = []
    private var stepStarted = ContinuousClock.now
    var steps: [Step] { lock.withLock { recorded } }

    init(json: Bool) { self.json = json }

    /// A narration line (a heading when `heading`).
    func say(_ line: String, heading: Bool = false) {
        guard !json else { return }
        if heading { print("") }
        print(heading ? "== \(line) ==" : line)
    }

    /// A progress note on a long step (stderr, so stdout stays the narration or the JSON).
    func progress(_ note: String) {
        fflush(nil)  // the narration so far first, also when stdout is a pipe
        FileHandle.standardError.write(Data("  … \(note)\n".utf8))
    }

    /// Records the step `name` ending now: `ok` and what it showed. Throws when not `ok`.
    func check(_ name: String, _ ok: Bool, _ detail: String) throws {
        lock.withLock {
            let now = ContinuousClock.now
            let elapsed = now - stepStarted
            stepStarted = now
            let ms = elapsed.inMilliseconds
            recorded.append(Step(name: name, ok: ok, ms: ms, detail: detail))
        }
        guard ok else { throw Failure(description: "\(name): \(detail)") }
    }

    /// Records an unexpected error as a failed step (unless a failed check ended the demo).
    func fail(_ error: any Error) {
        guard steps.last?.ok != false else { return }
        try? check("after \(steps.last?.name ?? "the start")", false, "\(error)")
    }

    var ok: Bool { !steps.isEmpty && steps.allSatisfy(\.ok) }

    /// The summary table, or the JSON object.
    func finish() {
        if json {
            let list = JSONValue.array(steps.map { step in
                .object(["name": .string(step.name), "ok": .bool(step.ok), "ms": .number((step.ms * 10).rounded() / 10),
                         "detail": .string(step.detail)])
            })
            print(JSONValue.object(["steps": list, "ok": .bool(ok)]).serialized)
            return
        }
        let width = max(4, steps.map(\.name.count).max() ?? 4)
        print("")
        print("== Summary ==")
        print("step".padding(toLength: width, withPad: " ", startingAt: 0) + "  result  time")
        for step in steps {
            let time = step.ms >= 1000 ? String(format: "%.1f s", step.ms / 1000) : String(format: "%.0f ms", step.ms)
            print(step.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + (step.ok ? "ok    " : "FAILED") + "  " + time)
        }
        let total = steps.reduce(0) { $0 + $1.ms } / 1000
        print(ok ? String(format: "all %d steps hold (%.1f s)", steps.count, total)
                 : "FAILED: \(steps.first { !$0.ok }.map { "\($0.name): \($0.detail)" } ?? "no step ran")")
    }
}
