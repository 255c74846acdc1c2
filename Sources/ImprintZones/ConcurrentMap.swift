/// Runs `body` over `items` with at most `width` calls in flight, and returns the results in
/// the items' order: a fan-out that never opens more connections than `width`, where one slow
/// item holds back only its own slot.
///
/// ```swift
/// let sizes = try await concurrentMap(zoneIds, width: 8) { try await store.usage(of: $0) }
/// ```
package func concurrentMap<Item: Sendable, Result: Sendable>(
    _ items: [Item], width: Int, _ body: @escaping @Sendable (Item) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: (Int, Result).self) { group in
        var results = [Result?](repeating: nil, count: items.count)
        var next = 0
        func start() {
            let index = next, item = items[index]
            group.addTask { (index, try await body(item)) }
            next += 1
        }
        while next < min(max(1, width), items.count) { start() }
        while let (index, result) = try await group.next() {
            results[index] = result
            if next < items.count { start() }
        }
        return results.map { $0! }
    }
}
