"""Co-search a chip: the best accelerator for GPT-2 XL among the designs with 8 tensor cores, its top list
and its Pareto frontier of throughput against area and energy, with progress on the way."""

import phaze


def show(done, total, best):
    print(f"\r{done}/{total} points  best {best}", end="", flush=True)


answer = phaze.search(model="gpt2-xl", tc=[8], pareto=True, progress=show)
print()
print(answer.top.to_string(index=False))
frontier = answer.pareto
print(f"\n{len(frontier)} points on the Pareto frontier; the smallest chips:")
print(frontier.sort_values("design.area_um2").head()[["design.area_um2", "samples_per_s", "energy_per_sample_j"]])
