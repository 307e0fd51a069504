
î@&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3X=b"G,Q6[@e%J
/T9^C(M2W<a!F+P5Z?d$I	.S8]B'L1V;` E*O4Y>c#H-R7\A&K0U:_D)N3Xˆ'ü©ñÒMbP? )ü©ñÒMbP?