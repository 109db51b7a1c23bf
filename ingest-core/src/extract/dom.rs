//! Edits of a parsed HTML tree (`markup5ever_rcdom`) that more than one
//! reader makes.

use std::rc::Rc;

use markup5ever_rcdom::Node;

/// Replaces each of `node`'s children that `unwrap` picks by the child's
/// own children, in place.
///
/// The grandchildren are taken out of the unwrapped child, never cloned:
/// rcdom empties the whole subtree of a node it drops, so a clone still
/// held elsewhere (a link's `<code>`) would lose its content.
pub(super) fn unwrap_children(node: &Node, unwrap: impl Fn(&Rc<Node>) -> bool) {
    let mut children = node.children.borrow_mut();
    if !children.iter().any(&unwrap) {
        return;
    }
    for child in std::mem::take(&mut *children) {
        if unwrap(&child) {
            children.append(&mut child.children.borrow_mut());
        } else {
            children.push(child);
        }
    }
}
