"""The Python package against the command line: each result's to_dict() equals the command's JSON answer,
bad input raises InputError with the command's message, the search calls its progress callback and stops on
a signal, and the tables are DataFrames with a row per entry of the answer."""

import json
import os
import signal
import subprocess
import tempfile
import threading
import unittest

import phaze

PHAZE = os.environ["PHAZE_BINARY"]
DATA = os.environ["PHAZE_TEST_DATA"]
TINY = os.path.join(DATA, "hf", "tiny-gpt2", "config.json")
# The small search of the C++ tests (tests/search/small_question.h): 8 designs, 144 points.
SMALL = dict(model=TINY, devices=8, global_batch=16, seq=64, mbs=[1, 2, 4], hbm=[0.0004, 0.0008, 0.002],
             tc=[1, 2], vc=[1, 2], width=[8, 16], depth=[8], glb_mib=[2], lower_fraction=0, link_bandwidth=0.5)


def cli_json(*args):
    """The command line's JSON answer."""
    return json.loads(subprocess.run([PHAZE, *args, "--json"], check=True, capture_output=True, text=True).stdout)


def small_args(mbs="1,2,4"):
    return ["search", "--model", TINY, "--devices", "8", "--global-batch", "16", "--seq", "64", "--mbs", mbs,
            "--hbm", "0.0004,0.0008,0.002", "--tc", "1,2", "--vc", "1,2", "--width", "8,16", "--depth", "8",
            "--glb-mib", "2", "--lower-fraction", "0", "--link-bandwidth", "0.5"]


class Commands(unittest.TestCase):
    def test_predict_equals_the_command_line(self):
        run = phaze.predict(model="llama2-7b", system="dgx-h100", tp=2, dp=4, global_batch=64)
        self.assertEqual(run.to_dict(), cli_json("predict", "--model", "llama2-7b", "--system", "dgx-h100",
                                                 "--tp", "2", "--dp", "4", "--global-batch", "64"))
        self.assertGreater(run.iteration_time_s, 0)

    def test_plan_lists_its_configurations_as_a_table(self):
        result = phaze.plan(model="llama2-7b", system="dgx-h100", gpus=8, global_batch=64, top=3)
        self.assertEqual(result.to_dict(), cli_json("plan", "--model", "llama2-7b", "--system", "dgx-h100",
                                                    "--gpus", "8", "--global-batch", "64", "--top", "3"))
        self.assertEqual(len(result.plans), len(result["best"]))

    def test_validate_gives_a_row_per_run(self):
        path = os.path.join(DATA, "vtrain", "ground_truth_single.csv")
        result = phaze.validate(path, system="vtrain-a100")
        self.assertEqual(len(result.rows), result["count"])

    def test_bad_input_raises_input_error_with_the_command_line_message(self):
        with self.assertRaises(phaze.InputError) as caught:
            phaze.predict(model="llama2-7b", system="dgx-h100", tp=3, global_batch=64)
        self.assertIsInstance(caught.exception, ValueError)
        cli = subprocess.run([PHAZE, "predict", "--model", "llama2-7b", "--system", "dgx-h100", "--tp", "3",
                              "--global-batch", "64"], capture_output=True, text=True)
        self.assertEqual(cli.returncode, 2)
        self.assertEqual("phaze: error: " + str(caught.exception), cli.stderr.strip())
        with self.assertRaises(phaze.InputError):
            phaze.model("no-such-model")

    def test_a_model_as_a_dict_is_its_config_json(self):
        with open(TINY) as f:
            config = json.load(f)
        # The same model, named by the file that held it: a temporary one for a dict.
        def unnamed(answer):
            return {k: v for k, v in answer.items() if k not in ("model", "description")}
        shown = phaze.model(config)
        self.assertEqual(unnamed(shown), unnamed(cli_json("model", "show", TINY)))
        run = phaze.predict(model=config, system="dgx-h100", global_batch=8, seq=64)
        self.assertEqual(unnamed(run.to_dict()), unnamed(cli_json("predict", "--model", TINY, "--system", "dgx-h100",
                                                                  "--global-batch", "8", "--seq", "64")))

    def test_report_of_a_result_equals_the_command_line_page(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            answer = os.path.join(d, "predict.json")
            with open(answer, "w") as f:
                f.write(subprocess.run([PHAZE, "predict", "--model", "llama2-7b", "--system", "dgx-h100", "--tp", "2",
                                        "--global-batch", "64", "--json"], check=True, capture_output=True,
                                       text=True).stdout)
            subprocess.run([PHAZE, "report", answer, "-o", os.path.join(d, "cli.html"), "--title", "run"],
                           check=True)
            run = phaze.predict(model="llama2-7b", system="dgx-h100", tp=2, global_batch=64)
            phaze.report(run, os.path.join(d, "py.html"), title="run")
            with open(os.path.join(d, "cli.html")) as a, open(os.path.join(d, "py.html")) as b:
                self.assertEqual(a.read(), b.read())
            with self.assertRaises(phaze.InputError):
                phaze.report({"a": 1}, os.path.join(d, "x.html"))


class Search(unittest.TestCase):
    def test_search_equals_the_command_line_and_reports_progress(self):
        seen = []
        result = phaze.search(progress=lambda done, total, best: seen.append((done, total)), threads=2, top=3,
                              pareto=True, **SMALL)
        self.assertEqual(result.to_dict(), cli_json(*small_args(), "--top", "3", "--pareto", os.devnull))
        self.assertTrue(seen)
        self.assertEqual(seen[-1][0], seen[-1][1])  # the last report: every point done
        self.assertEqual(len(result.top), 3)
        self.assertEqual(len(result.pareto), sum(len(f["points"]) for f in result["pareto"]))
        self.assertEqual(result.score, result["best"]["average_samples_per_s"])

    def test_a_question_dict_with_options_beside_it(self):
        question = json.loads(subprocess.run([PHAZE, *small_args(), "--write-question", "-"], check=True,
                                             capture_output=True, text=True).stdout)
        result = phaze.search(question, top=2, mbs=[1, 2])
        self.assertEqual(result.to_dict(), cli_json(*small_args("1,2"), "--top", "2"))

    def test_evaluate_equals_the_command_line(self):
        workload = dict(model=TINY, devices=8, global_batch=16, seq=64, mbs=[1, 2], hbm=[0.002, 32])
        chip = dict(name="mine", num_tc=2, tc_width=8, tc_depth=16, num_vc=1, vc_width=8, glb_mib=2)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "chip.json")
            with open(path, "w") as out:
                json.dump(chip, out)
            expected = cli_json("evaluate", "--arch", path, "--model", TINY, "--devices", "8", "--global-batch", "16",
                                "--seq", "64", "--mbs", "1,2", "--hbm", "0.002,32")
        self.assertEqual(phaze.evaluate(chip, threads=2, **workload).to_dict(), expected)
        self.assertEqual(phaze.evaluate("tpuv4-like", **workload)["settings"]["chip"]["name"], "tpuv4-like")

    def test_bad_search_input_raises_input_error(self):
        with self.assertRaises(phaze.InputError) as caught:
            phaze.search(**{**SMALL, "mbs": [3]})
        self.assertIn("--mbs", str(caught.exception))

    def test_a_signal_stops_the_search(self):
        # The whole GPT-2 XL space takes far longer than the signal's delay.
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                phaze.search(model="gpt2-xl", threads=2)
        finally:
            timer.cancel()


if __name__ == "__main__":
    unittest.main()
