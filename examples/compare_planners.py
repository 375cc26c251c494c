"""Compare planners: PHAZE's planner (one width and degree for every stage) against the stagewise planner
(each stage its own) on the same small space of GPT-2 XL designs."""

import phaze

space = dict(model="gpt2-xl", tc=[8], width=[128], depth=[128])
for planner in ("phaze", "stagewise"):
    answer = phaze.search(planner=planner, **space)
    plan = answer.best["models"][0]["plan"]
    print(f"{planner:>9}: {answer.score:.2f} samples/s, {len(plan['stages'])} stages, "
          f"{answer.stats['elapsed_s']:.1f} s of search")
