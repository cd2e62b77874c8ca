# bullet3 examples/pybullet/gym/pybullet_envs/examples/testMJCF.py (pybullet 3.2.7 wheel:
# pybullet_envs/examples/), zlib licence (LICENSE.bullet3). Altered for sim_node, headless:
# import; GUI -> DIRECT; the endless loop -> STEPS passes (env PYBULLET_EXAMPLE_STEPS) without
# sleeps; prints the loaded bodies, and per pass the camera image's size and how many pixels see
# a body (the GUI showed it), and where the bodies' bases are at the end.
import os
import inspect
import numpy
currentdir = os.path.dirname(os.path.abspath(inspect.getfile(inspect.currentframe())))
parentdir = os.path.dirname(os.path.dirname(currentdir))
os.sys.path.insert(0, parentdir)

import sim_node.pybullet as p
import pybullet_data
import time

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "5"))


def test(args):
  p.connect(p.DIRECT)
  p.setAdditionalSearchPath(pybullet_data.getDataPath())
  fileName = os.path.join("mjcf", args.mjcf)
  print("fileName")
  print(fileName)
  objs = p.loadMJCF(fileName)
  print("bodies", objs)
  for uid in objs:
    print(uid, p.getBodyInfo(uid), "joints", p.getNumJoints(uid))
  for step in range(STEPS):
    p.stepSimulation()
    img = p.getCameraImage(320, 240)
    print("image", img[0], img[1], "pixels on a body", int((numpy.asarray(img[4]) >= 0).sum()))
  for uid in objs:
    print(uid, "base", list(p.getBasePositionAndOrientation(uid)[0]))


if __name__ == '__main__':
  import argparse
  parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  parser.add_argument('--mjcf', help='MJCF filename', default="humanoid.xml")
  args = parser.parse_args()
  test(args)
