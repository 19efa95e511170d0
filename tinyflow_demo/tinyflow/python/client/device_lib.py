"""tensorflow.python.client.device_lib: list_local_devices(), which TF1 programs use to count their GPUs."""
import collections

__all__ = ["list_local_devices"]

DeviceAttributes = collections.namedtuple(
    "DeviceAttributes", ["name", "device_type", "memory_limit", "locality", "incarnation", "physical_device_desc"])


def list_local_devices(session_config=None):
    """The devices tinyflow's sessions place ops on: one CPU device (tinyflow has no per-op GPU placement;
    tf.test.is_gpu_available() is False)."""
    return [DeviceAttributes(name="/device:CPU:0", device_type="CPU", memory_limit=268435456, locality={},
                             incarnation=0, physical_device_desc="")]
