import Testing
@testable import ImprintMLS

@Suite struct TreeMathTests {
    @Test func smallTree() {
        // 4 leaves: nodes 0..6, root 3.
        #expect(TreeMath.nodeWidth(4) == 7)
        #expect(TreeMath.root(4) == 3)
        #expect(TreeMath.root(5) == 7)
        #expect(TreeMath.left(3) == 1)
        #expect(TreeMath.right(3) == 5)
        #expect(TreeMath.left(0) == nil)
        #expect(TreeMath.parent(0, leafCount: 4) == 1)
        #expect(TreeMath.parent(3, leafCount: 4) == nil)
        #expect(TreeMath.sibling(1, leafCount: 4) == 5)
        #expect(TreeMath.directPath(0, leafCount: 4) == [1, 3])
        #expect(TreeMath.copath(0, leafCount: 4) == [2, 5])
        #expect(TreeMath.commonAncestor(0, 6) == 3)
        #expect(TreeMath.commonAncestor(4, 6) == 5)
    }
}
