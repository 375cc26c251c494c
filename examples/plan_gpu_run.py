"""Plan a GPU run: the fastest Megatron-LM configurations of Llama-2-7B on 64 H100s, and where the best one's
iteration time goes. Run with PYTHONPATH=build/python (after `make`) or in an environment where `pip install .` put phaze."""

import phaze

result = phaze.plan(model="llama2-7b", system="dgx-h100", gpus=64, global_batch=512, top=5)
table = result.plans
columns = ["plan.tp", "plan.pp", "plan.dp", "plan.micro_batch", "plan.precision", "iteration_time_s", "mfu"]
print(table[columns].to_string(index=False))

best = result["best"][0]
print(f"\nbest: {best['iteration_time_s'] * 1e3:.1f} ms per iteration, {best['tokens_per_s_per_gpu']:.0f} tokens/s per GPU")
for part, seconds in best["breakdown"].items():
    if isinstance(seconds, (int, float)) and seconds > 0:
        print(f"  {part:<32} {seconds * 1e3:9.1f} ms")
