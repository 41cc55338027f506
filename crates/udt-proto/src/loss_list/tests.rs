//! Loss list tests: hand cases plus a model check against a `BTreeSet` of offsets.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

const MAX: u32 = SeqNumber::MAX;

fn s(v: u32) -> SeqNumber {
    SeqNumber::new(v)
}

fn ranges_of(list: &SenderLossList) -> Vec<(u32, u32)> {
    list.ranges().map(|(a, b)| (a.value(), b.value())).collect()
}

#[test]
fn merges_adjacent_and_overlapping_ranges() {
    let mut list = SenderLossList::new(1000);
    assert_eq!(list.insert(s(10), s(12)), 3);
    assert_eq!(list.insert(s(14), s(15)), 2);
    assert_eq!(ranges_of(&list), vec![(10, 12), (14, 15)]);
    assert_eq!(list.insert(s(13), s(13)), 1);
    assert_eq!(ranges_of(&list), vec![(10, 15)]);
    assert_eq!(list.insert(s(8), s(20)), 7);
    assert_eq!(ranges_of(&list), vec![(8, 20)]);
    assert_eq!(list.insert(s(9), s(11)), 0);
    assert_eq!(list.len(), 13);
    assert_eq!(list.insert(s(30), s(29)), 0, "reversed range ignored");
}

#[test]
fn remove_before_and_through() {
    let mut list = SenderLossList::new(1000);
    list.insert(s(10), s(20));
    list.insert(s(30), s(40));
    list.remove_before(s(15));
    assert_eq!(ranges_of(&list), vec![(15, 20), (30, 40)]);
    list.remove_through(s(30));
    assert_eq!(ranges_of(&list), vec![(31, 40)]);
    assert_eq!(list.len(), 10);
    list.remove_before(s(5));
    assert_eq!(list.len(), 10);
    list.remove_before(s(100));
    assert!(list.is_empty());
    assert_eq!(list.first(), None);
}

#[test]
fn pop_first_walks_in_order_across_wrap() {
    let mut list = SenderLossList::new(1000);
    list.insert(s(MAX - 1), s(1));
    list.insert(s(MAX - 5), s(MAX - 5));
    let popped: Vec<u32> = std::iter::from_fn(|| list.pop_first())
        .map(|x| x.value())
        .collect();
    assert_eq!(popped, vec![MAX - 5, MAX - 1, MAX, 0, 1]);
}

#[test]
fn capacity_keeps_the_lowest_new_numbers() {
    let mut list = SenderLossList::new(10);
    list.insert(s(5), s(6));
    assert_eq!(list.insert(s(0), s(100)), 8);
    assert_eq!(ranges_of(&list), vec![(0, 9)]);
    assert_eq!(list.insert(s(200), s(200)), 0);
    list.pop_first();
    assert_eq!(list.insert(s(200), s(300)), 1);
    assert_eq!(ranges_of(&list), vec![(1, 9), (200, 200)]);
    assert_eq!(list.capacity(), 10);
}

#[test]
fn receiver_remove_splits_a_range() {
    let mut list = ReceiverLossList::new(100);
    list.insert(s(MAX - 2), s(2));
    assert!(list.contains(s(0)));
    assert!(list.remove(s(0)));
    assert!(!list.remove(s(0)));
    let ranges: Vec<_> = list.ranges().map(|(a, b)| (a.value(), b.value())).collect();
    assert_eq!(ranges, vec![(MAX - 2, MAX), (1, 2)]);
    assert_eq!(list.len(), 5);
    list.remove_range(s(MAX), s(1));
    let ranges: Vec<_> = list.ranges().map(|(a, b)| (a.value(), b.value())).collect();
    assert_eq!(ranges, vec![(MAX - 2, MAX - 1), (2, 2)]);
    assert_eq!(list.first(), Some(s(MAX - 2)));
    list.remove_before(s(2));
    assert_eq!(list.len(), 1);
}

#[test]
fn ranges_due_backs_off_per_range() {
    let at = Instant::from_micros;
    let interval = Duration::from_millis(10);
    let mut list = ReceiverLossList::new(100);
    list.insert_reported(s(10), s(11), at(0));
    list.insert(s(20), s(20));
    // Only the never-reported range is due at once.
    assert_eq!(list.ranges_due(at(1), interval, 10), vec![(s(20), s(20))]);
    assert!(list.ranges_due(at(2), interval, 10).is_empty());
    // 10 ms after its immediate NAK the first range is due (k = 1); the other was reported
    // at 1 µs, so it is due at 10.001 ms.
    assert_eq!(
        list.ranges_due(at(10_000), interval, 10),
        vec![(s(10), s(11))]
    );
    assert_eq!(
        list.ranges_due(at(10_001), interval, 10),
        vec![(s(20), s(20))]
    );
    // Now both were reported twice: the next is 2 intervals later.
    assert!(list.ranges_due(at(29_999), interval, 10).is_empty());
    assert_eq!(
        list.ranges_due(at(30_000), interval, 1),
        vec![(s(10), s(11))]
    );
    // A new adjacent gap merges into the unreported state and is due at once.
    list.insert(s(12), s(12));
    assert_eq!(
        list.ranges_due(at(30_000), interval, 1),
        vec![(s(10), s(12))]
    );
    assert_eq!(
        list.ranges_due(at(30_001), interval, 10),
        vec![(s(20), s(20))]
    );
}

/// One operation of the model test, on offsets from a base near the wrap.
#[derive(Clone, Debug)]
enum Op {
    Insert(u32, u32),
    RemoveRange(u32, u32),
    Remove(u32),
    RemoveBefore(u32),
    RemoveThrough(u32),
    PopFirst,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..300, 0u32..40).prop_map(|(a, n)| Op::Insert(a, n)),
        1 => (0u32..300, 0u32..20).prop_map(|(a, n)| Op::RemoveRange(a, n)),
        2 => (0u32..300).prop_map(Op::Remove),
        1 => (0u32..300).prop_map(Op::RemoveBefore),
        1 => (0u32..300).prop_map(Op::RemoveThrough),
        2 => Just(Op::PopFirst),
    ]
}

/// Applies `op` to the model; returns what `insert` should report.
fn apply_model(model: &mut BTreeSet<u32>, capacity: usize, op: &Op) -> Option<u32> {
    match *op {
        Op::Insert(a, n) => {
            let mut added = 0;
            for x in a..=a + n {
                if model.len() < capacity && model.insert(x) {
                    added += 1;
                }
            }
            return Some(added);
        }
        Op::RemoveRange(a, n) => model.retain(|&x| x < a || x > a + n),
        Op::Remove(a) => {
            model.remove(&a);
        }
        Op::RemoveBefore(a) => model.retain(|&x| x >= a),
        Op::RemoveThrough(a) => model.retain(|&x| x > a),
        Op::PopFirst => {
            model.pop_first();
        }
    }
    None
}

fn model_ranges(model: &BTreeSet<u32>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &x in model {
        match out.last_mut() {
            Some(last) if last.1 + 1 == x => last.1 = x,
            _ => out.push((x, x)),
        }
    }
    out
}

proptest! {
    #[test]
    fn sender_list_matches_model(
        base in prop_oneof![Just(MAX - 150), 0..=MAX],
        capacity in 1u32..200,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let at = |off: u32| SeqNumber::new(base) + off;
        let mut list = SenderLossList::new(capacity);
        let mut model = BTreeSet::new();
        for op in &ops {
            let pre_first = model.first().copied();
            let expected = apply_model(&mut model, capacity as usize, op);
            match *op {
                Op::Insert(a, n) => {
                    prop_assert_eq!(Some(list.insert(at(a), at(a + n))), expected);
                }
                Op::RemoveRange(a, n) => list.remove_range(at(a), at(a + n)),
                Op::Remove(a) => list.remove_range(at(a), at(a)),
                Op::RemoveBefore(a) => list.remove_before(at(a)),
                Op::RemoveThrough(a) => list.remove_through(at(a)),
                Op::PopFirst => {
                    prop_assert_eq!(list.pop_first(), pre_first.map(at));
                }
            }
            prop_assert_eq!(list.len() as usize, model.len());
            prop_assert_eq!(list.first(), model.first().map(|&x| at(x)));
            let got: Vec<_> = list.ranges().collect();
            let want: Vec<_> = model_ranges(&model).into_iter().map(|(a, b)| (at(a), at(b))).collect();
            prop_assert_eq!(got, want);
        }
        for x in 0..350 {
            prop_assert_eq!(list.contains(at(x)), model.contains(&x));
        }
    }

    #[test]
    fn receiver_list_matches_model(
        base in prop_oneof![Just(MAX - 150), 0..=MAX],
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let at = |off: u32| SeqNumber::new(base) + off;
        let capacity = 120;
        let mut list = ReceiverLossList::new(capacity);
        let mut model = BTreeSet::new();
        for op in &ops {
            let before = model.contains(&match *op { Op::Remove(a) => a, _ => u32::MAX });
            let expected = apply_model(&mut model, capacity as usize, op);
            match *op {
                Op::Insert(a, n) => {
                    prop_assert_eq!(Some(list.insert(at(a), at(a + n))), expected);
                }
                Op::RemoveRange(a, n) => list.remove_range(at(a), at(a + n)),
                Op::Remove(a) => prop_assert_eq!(list.remove(at(a)), before),
                Op::RemoveBefore(a) => list.remove_before(at(a)),
                Op::RemoveThrough(a) => list.remove_before(at(a) + 1u32),
                Op::PopFirst => {
                    if let Some(first) = list.first() {
                        list.remove(first);
                    }
                }
            }
            prop_assert_eq!(list.len() as usize, model.len());
            let got: Vec<_> = list.ranges().collect();
            let want: Vec<_> = model_ranges(&model).into_iter().map(|(a, b)| (at(a), at(b))).collect();
            prop_assert_eq!(got, want);
        }
    }
}

#[test]
fn the_first_range_is_due_again_after_its_wait_whatever_its_back_off() {
    let at = Instant::from_micros;
    let wait = Duration::from_millis(5);
    let mut list = ReceiverLossList::new(100);
    list.insert_reported(s(10), s(11), at(0));
    list.insert(s(20), s(20));
    assert_eq!(list.first_reported(), Some(at(0)));
    assert_eq!(list.first_due(at(4_999), wait), None);
    assert_eq!(list.first_due(at(5_000), wait), Some((s(10), s(11))));
    assert_eq!(list.first_reported(), Some(at(5_000)));
    // Its back-off count did not grow: the periodic round still finds it due one interval
    // after the report it counts (k = 1), and the other range as never reported.
    let interval = Duration::from_millis(10);
    assert_eq!(
        list.ranges_due(at(5_001), interval, 10),
        vec![(s(20), s(20))]
    );
    assert_eq!(
        list.ranges_due(at(15_000), interval, 10),
        vec![(s(10), s(11))]
    );
    // Filling the first packet leaves the rest of the range first, with its report time.
    assert!(list.remove(s(10)));
    assert_eq!(list.first_reported(), Some(at(15_000)));
    assert_eq!(list.first_due(at(19_999), wait), None);
    assert_eq!(list.first_due(at(20_000), wait), Some((s(11), s(11))));
}
