/// Array-based tree index arithmetic (RFC 9420 Appendix C).
///
/// Leaves sit at even node indices, parents at odd indices. All functions are
/// defined for a complete tree with `leafCount` leaves, a power of two.
public enum TreeMath {
    /// Level of a node: number of trailing one bits.
    public static func level(_ x: UInt32) -> UInt32 {
        UInt32((~x).trailingZeroBitCount)
    }

    /// Number of nodes for `leafCount` leaves.
    public static func nodeWidth(_ leafCount: UInt32) -> UInt32 {
        leafCount == 0 ? 0 : 2 * (leafCount - 1) + 1
    }

    /// Root node index of a tree with `leafCount` leaves.
    public static func root(_ leafCount: UInt32) -> UInt32 {
        let w = nodeWidth(leafCount)
        guard w > 0 else { return 0 }
        return (UInt32(1) << (31 - UInt32(w.leadingZeroBitCount) )) - 1
    }

    /// Left child of an intermediate node, nil for a leaf.
    public static func left(_ x: UInt32) -> UInt32? {
        let k = level(x)
        guard k > 0 else { return nil }
        return x ^ (UInt32(1) << (k - 1))
    }

    /// Right child of an intermediate node, nil for a leaf.
    public static func right(_ x: UInt32) -> UInt32? {
        let k = level(x)
        guard k > 0 else { return nil }
        return x ^ (UInt32(3) << (k - 1))
    }

    /// Parent of `x` in a tree of `leafCount` leaves; nil for the root.
    public static func parent(_ x: UInt32, leafCount: UInt32) -> UInt32? {
        if x == root(leafCount) { return nil }
        let k = level(x)
        guard k < 31 else { return nil }
        let b = (x >> (k + 1)) & 1
        return (x | (UInt32(1) << k)) ^ (b << (k + 1))
    }

    /// Sibling of `x`; nil for the root.
    public static func sibling(_ x: UInt32, leafCount: UInt32) -> UInt32? {
        guard let p = parent(x, leafCount: leafCount), let l = left(p), let r = right(p) else { return nil }
        return x < p ? r : l
    }

    /// Direct path of `x`: its ancestors from parent up to the root.
    public static func directPath(_ x: UInt32, leafCount: UInt32) -> [UInt32] {
        var d: [UInt32] = []
        var cur = x
        while let p = parent(cur, leafCount: leafCount) {
            d.append(p)
            cur = p
        }
        return d
    }

    /// Copath of `x`: siblings of `x` and of its direct path except the root.
    public static func copath(_ x: UInt32, leafCount: UInt32) -> [UInt32] {
        if x == root(leafCount) { return [] }
        var d = [x] + directPath(x, leafCount: leafCount)
        d.removeLast()
        return d.compactMap { sibling($0, leafCount: leafCount) }
    }

    /// Whether `x` lies in the subtree rooted at `root`.
    public static func isInSubtree(_ x: UInt32, root r: UInt32) -> Bool {
        let k = level(r)
        return (x >> (k + 1)) == (r >> (k + 1))
    }

    /// Lowest common ancestor of two nodes.
    public static func commonAncestor(_ x: UInt32, _ y: UInt32) -> UInt32 {
        let lx = level(x) + 1, ly = level(y) + 1
        if lx <= ly && (x >> ly) == (y >> ly) { return y }
        if ly <= lx && (x >> lx) == (y >> lx) { return x }
        var xn = x, yn = y, k: UInt32 = 0
        while xn != yn {
            xn >>= 1
            yn >>= 1
            k += 1
        }
        return (xn << k) + (UInt32(1) << (k - 1)) - 1
    }
}
