"""peak_trace.py against measure_torch: the trail's running total at its
peak row is the peak measure() reports, the row is an allocation inside
the backward, and --after finds a later region's own largest total."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import activation_oracle  # noqa: E402
import measure_torch  # noqa: E402
import peak_trace  # noqa: E402

TINY_LLAMA = {"shape": {"num_layers": 2, "hidden_size": 8,
                        "num_attention_heads": 2, "vocab_size": 16,
                        "intermediate_size": 16},
              "workload": {"micro_batch": 1, "sequence_length": 4,
                           "activation_checkpointing": False,
                           "attention": "eager"}}


class PeakTrace(unittest.TestCase):
    def setUp(self):
        shape, work = activation_oracle.read_request(TINY_LLAMA)
        self.profiles = {}
        self.measured = measure_torch.measure(
            shape, work, "llama", 0,
            on_profile=lambda key, prof: self.profiles.update({key: prof}))

    def test_the_peak_row_is_the_measured_peak(self):
        rows, mark = peak_trace.trail(self.profiles["measured_peak_bytes"])
        at = peak_trace.peak_row(rows, mark)
        self.assertEqual(rows[at][2], self.measured["measured_peak_bytes"])
        self.assertGreaterEqual(rows[at][0], mark)
        self.assertGreater(rows[at][1], 0)  # an allocation tops it
        self.assertNotEqual(rows[at][3], "?")

    def test_after_looks_from_a_later_operation_on(self):
        rows, mark = peak_trace.trail(self.profiles["measured_peak_bytes"])
        # The last layer's SiLU backward comes after the loss's and the
        # head's: its region's largest total is no larger than the whole
        # backward's, and starts at the first row inside such an operation.
        at = peak_trace.peak_row(rows, mark, "silu_backward")
        first = next(i for i, r in enumerate(rows) if r[0] >= mark and
                     ("silu_backward" in r[3] or "silu_backward" in r[4]))
        self.assertGreaterEqual(at, first)
        self.assertLessEqual(rows[at][2],
                             self.measured["measured_peak_bytes"])


if __name__ == "__main__":
    unittest.main()
