import Foundation

/// The path of executable `name` built next to the running test binary (SwiftPM puts every
/// product of a build in one directory; Swift Testing may run from inside an .xctest bundle,
/// so up to three levels are searched), or nil if `swift build --build-tests` did not build it.
public func siblingExecutable(_ name: String) -> String? {
    guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
    var directory = (exe as NSString).deletingLastPathComponent
    for _ in 0..<3 {
        let candidate = directory + "/" + name
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = (directory as NSString).deletingLastPathComponent
    }
    return nil
}
