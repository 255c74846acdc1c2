import Foundation

/// The repository root (this file is Tests/ImprintStoreTests/TestSupport.swift).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// Every regular file under `root`, as paths relative to it.
func regularFiles(under root: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var result: [String] = []
    while let relative = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
            result.append(relative)
        }
    }
    return result.sorted()
}

/// Copies a directory tree (used to open sample bundles without touching the repository).
func copyTree(_ source: String, to destination: String) throws {
    try FileManager.default.copyItem(atPath: source, toPath: destination)
}
