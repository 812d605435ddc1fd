#!/usr/bin/env python3
"""How well six estimates of a full engine's wait for a slot predict the wait that followed.

   ./kvr explain --topics-prefix demo-xxxx. --csv > run.csv     # a demo run's requests
   scripts/slot-wait-eval.py run.csv [SLOTS]                    # SLOTS: the engines' slots (32)

At every decision, for every engine whose live requests fill its slots (q = live - slots + 1
requests ahead of a new one), each estimate of how long until the q-th slot frees is set against
the truth (the q-th end among the requests running then):

  mean    q x slot time / slots: the engine's mean slot time (end - decision - queue of its last 50
          completed requests, as the job learns it) spread over its slots;
  recent  q x max(mean's pace, window / (ended in the window + 1)), window = slot time: the pace of
          its last completions (kvr_pick from run 7 to run 8);
  age     the q-th oldest live request's placement + slot time: requests placed together end together;
  count   q x the fleet's mean slot time / slots: every engine at one pace, so the fewest ahead wins
          (what least-loaded does);
  progress what an engine reporting each running request's decode progress would allow: a request
          that has decoded for y ms ends, on average, after E[D - y | D > y] more, D the decode
          times of the fleet's last 200 completed requests (the q-th soonest of these ends);
  hazard  the same progress, as a rate: each running request ends within the next second with the
          share of those decode times longer than y that end before y + 1 s; the engine frees its
          q-th slot after q / (the sum of these rates).

Printed per estimate: the mean absolute error, and the regret of choosing by it: how much later
the chosen full engine freed its slot than the best one did (mean and 90th percentile).
Python 3, standard library only.
"""
import csv
import statistics as st
import sys


def main(path, slots):
    rows = [r for r in csv.DictReader(open(path)) if r['finished_ms']]
    for r in rows:
        r['d'] = int(r['decided_ms'])
        r['f'] = int(r['finished_ms'])
        r['start'] = r['d'] + float(r['queue_ms'])
        r['first'] = r['d'] + float(r['ttft_ms'])
    by_engine = {}
    for r in rows:
        by_engine.setdefault(r['engine'], []).append(r)
    errors = {k: [] for k in ('mean', 'recent', 'age', 'count', 'progress', 'hazard')}
    finished = sorted(rows, key=lambda x: x['f'])
    regret = {k: [] for k in errors}
    for r in rows:
        t = r['d']
        estimate = {k: {} for k in errors}
        truth, slot_of = {}, {}
        decodes = [x['f'] - x['first'] for x in finished if x['f'] <= t][-200:]

        def remaining(y):
            longer = [d - y for d in decodes if d > y]
            return st.mean(longer) if longer else 0

        def hazard(y, w=1000):
            longer = [d for d in decodes if d > y]
            if not longer:
                return 1 / 500
            return max(sum(1 for d in longer if d <= y + w), 0.5) / len(longer) / w
        for engine, its in by_engine.items():
            live = [x for x in its if x['d'] < t < x['f']]
            q = len(live) - slots + 1
            done = [x for x in its if x['f'] <= t]
            running = sorted((x for x in live if x['start'] <= t), key=lambda x: x['f'])
            if q < 1 or len(done) < 5 or q > len(running):
                continue
            truth[engine] = running[q - 1]['f'] - t
            slot = st.mean(x['f'] - x['start'] for x in done[-50:])
            slot_of[engine] = slot
            window = min(slot, 60_000)
            ended = sum(1 for x in done if x['f'] > t - window)
            estimate['mean'][engine] = q * slot / slots
            estimate['recent'][engine] = q * max(slot / slots, window / (ended + 1))
            oldest = sorted(live, key=lambda x: x['d'])
            ends = []
            for i, x in enumerate(oldest[:q]):
                start = x['d'] if i < slots else max(x['d'], ends[i - slots])
                ends.append(max(t, start + slot))
            estimate['age'][engine] = ends[q - 1] - t
            estimate['count'][engine] = q
            estimate['progress'][engine] = sorted(remaining(max(0, t - x['first'])) + max(0, x['first'] - t)
                                                  for x in running)[q - 1]
            estimate['hazard'][engine] = q / sum(hazard(t - x['first']) if x['first'] <= t else 1e-5 for x in running)
        if len(truth) < 2:
            continue
        best = min(truth.values())
        pace = st.mean(slot_of[e] for e in truth) / slots
        for e in truth:
            estimate['count'][e] *= pace
        for k in errors:
            errors[k].extend(abs(estimate[k][e] - truth[e]) for e in truth)
            chosen = min(truth, key=lambda e: estimate[k][e])
            regret[k].append(truth[chosen] - best)
    print(f"{path}: {len(regret['mean'])} decisions with two or more full engines")
    for k in errors:
        if errors[k]:
            ordered = sorted(regret[k])
            print(f"  {k:7s} mean abs error {st.mean(errors[k]):6.0f} ms   regret mean {st.mean(regret[k]):5.0f} ms, "
                  f"p90 {ordered[int(0.9 * len(ordered))]:5.0f} ms")


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 32)
