// mls-vectors <file.json>...: runs RFC 9420 test-vector files (see docs/mls.md).
import Foundation
import ImprintMLS

let args = Array(CommandLine.arguments.dropFirst())
if args.isEmpty || args.contains("-h") || args.contains("--help") {
    print("usage: mls-vectors <file.json>...")
    print("implemented kinds: \(MLSTestVectors.implementedKinds.joined(separator: ", "))")
    exit(args.isEmpty ? 2 : 0)
}
var allOK = true
let verbose = ProcessInfo.processInfo.environment["MLS_VECTORS_VERBOSE"] != nil
for path in args {
    let report = MLSTestVectors.run(path: path)
    print(report.line)
    if verbose { for f in report.failures { print("  \(f)") } }
    if !report.ok { allOK = false }
}
exit(allOK ? 0 : 1)
